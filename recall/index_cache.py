"""Per-process cache of recall indexes, one per character, keyed on ``Character.memory_version``.

Every write to recallable memory bumps the version in the database (``character_memory_changed``), so a
process compares one integer per request and rebuilds only when any process changed that character's
memories. The version is read *before* the pools, so a change committed during a build makes the next
request rebuild rather than be missed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from nekomem.embeddings import Embedder, trim_heap
from recall.engine import RecallIndex
from recall.selectors import character_memory_version, recall_pools

logger = logging.getLogger(__name__)

MAX_CHARACTERS = 32  # indexes kept per process (least recently used dropped first)


@dataclass(frozen=True)
class _Entry:
    version: int
    model_id: str | None
    stop_names: tuple[str, ...]
    index: RecallIndex

    @property
    def key(self) -> tuple[int, str | None, tuple[str, ...]]:
        return (self.version, self.model_id, self.stop_names)


_cache: OrderedDict[int, _Entry] = OrderedDict()
_lock = threading.Lock()
_build_locks: dict[int, threading.Lock] = {}


def recall_index(
    *, character_id: int, stop_names: list[str], embedder: Embedder | None, version: int | None = None
) -> RecallIndex:
    """The character's index, rebuilt when its memory version or the vector model changed.

    ``version`` is the ``memory_version`` the caller read (before this call) with the character;
    without it, it is read here.
    """
    if version is None:
        version = character_memory_version(character_id=character_id)
    if version is None:
        return RecallIndex([])
    model_id = embedder.model_id if embedder is not None else None
    names = tuple(stop_names)
    key = (version, model_id, names)
    with _lock:
        entry = _cache.get(character_id)
        if entry is not None and entry.key == key:
            _cache.move_to_end(character_id)
            return entry.index
        build_lock = _build_locks.setdefault(character_id, threading.Lock())
    # One build per character at a time; concurrent requests wait and reuse it.
    with build_lock:
        with _lock:
            entry = _cache.get(character_id)
            if entry is not None and entry.key == key:
                return entry.index
        started = time.monotonic()
        index = RecallIndex(
            recall_pools(character_id=character_id, embedder=embedder),
            stop_names=stop_names,
            dim=embedder.dim if embedder is not None else None,
        )
        trim_heap()  # the build's temporaries, or a large index keeps them resident
        logger.info(
            "recall index built character=%s rows=%d version=%d ms=%d mb=%.1f",
            character_id,
            len(index),
            version,
            (time.monotonic() - started) * 1000,
            index.nbytes / 1e6,
        )
        with _lock:
            _cache[character_id] = _Entry(version=version, model_id=model_id, stop_names=names, index=index)
            _cache.move_to_end(character_id)
            while len(_cache) > MAX_CHARACTERS:
                _cache.popitem(last=False)
        return index


def clear() -> None:
    """Forget every cached index (tests; a restart does the same)."""
    with _lock:
        _cache.clear()
