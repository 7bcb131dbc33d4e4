"""The cache itself: one entry per character, least recently used dropped first, and the counters
of what this process did."""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict, deque
from dataclasses import dataclass, field
from datetime import datetime

from nekomem.runtime.caches import CacheUsage
from recall.engine import RecallIndex
from recall.selectors import RawLogMarks

# Indexes kept per process, least recently used dropped first: at most this many, and at most this many
# bytes of arrays. A small character's index is tens of kilobytes, so a chat server with hundreds of
# characters keeps them all (32 made every other query of a 200-character load rebuild one); a 100k
# import's is a few hundred megabytes.
MAX_CHARACTERS = 512
MAX_CACHE_BYTES = 2 * 1024**3
MAX_DELTA_ROWS = 20_000  # a longer delta is read as a rebuild
COMPACT_FRACTION = 0.25  # rebuild in the background once this share of the rows changed since the build
COMPACT_MIN_ROWS = 2_000

# What this process did, for tests and ``explain``: full builds (on a request or in the background),
# deltas applied and the rows they carried.
counters: Counter[str] = Counter()


@dataclass
class _Entry:
    version: int
    model_id: str | None
    stop_names: tuple[str, ...]
    index: RecallIndex
    compacting: bool = False
    # The raw-turn pool: (timestamp, key) of its live rows, the last one read, extraction's cursor.
    raw_live: deque[tuple[datetime, int]] | None = None
    raw_after: tuple[datetime, int] | None = None
    raw_covered: datetime | None = None
    # ``Character.raw_rows_written`` as read before the read that brought the pool up to date: the same
    # count on a request means no new raw turn. None: unknown (a loaded snapshot, a warm-up).
    raw_written: int | None = None
    raw_built: RawLogMarks | None = None  # the cursor and count read before the build read the raw turns
    saving: bool = False
    filling: bool = False  # queued for, or in, the vector filler
    saved_version: int | None = None  # the version of the snapshot this process wrote or loaded
    saved_fills: int = 0  # the index's filled_vectors / changed_rows when it was last saved
    saved_changes: int = 0
    # Whether the entry has answered a query: its first answer waits for the vectors a catch-up
    # deferred (``_vectors_complete``), later ones let the filler bring them in.
    served: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)  # one catch-up or build at a time

    def serves(self, model_id: str | None, stop_names: tuple[str, ...]) -> bool:
        return self.model_id == model_id and self.stop_names == stop_names


_cache: OrderedDict[int, _Entry] = OrderedDict()
_lock = threading.Lock()
_build_locks: dict[int, threading.Lock] = {}


def _build_lock(character_id: int) -> threading.Lock:
    """One load or build per character at a time; concurrent requests wait and reuse it."""
    with _lock:
        return _build_locks.setdefault(character_id, threading.Lock())


def _store(character_id: int, entry: _Entry, *, replace: bool = False) -> None:
    with _lock:
        current = _cache.get(character_id)
        newer = (
            current is not None
            and current.serves(entry.model_id, entry.stop_names)
            and current.version > entry.version
        )
        if newer and not replace:
            return  # another thread stored a newer one meanwhile
        _cache[character_id] = entry
        _cache.move_to_end(character_id)
        while len(_cache) > 1 and (
            len(_cache) > MAX_CHARACTERS or sum(e.index.nbytes for e in _cache.values()) > MAX_CACHE_BYTES
        ):
            _cache.popitem(last=False)


class RecallIndexBuilding(Exception):
    """The character's index is still being built; recall answers with no results meanwhile."""


def usage() -> CacheUsage:
    """The indexes this process keeps: characters, rows and bytes of arrays (bounded by
    ``MAX_CHARACTERS`` and ``MAX_CACHE_BYTES``)."""
    with _lock:
        entries = list(_cache.values())
    return CacheUsage(
        entries=len(entries),
        rows=sum(len(entry.index) for entry in entries),
        bytes=sum(entry.index.nbytes for entry in entries),
    )


def clear() -> None:
    """Forget every cached index (tests; a restart does the same)."""
    with _lock:
        _cache.clear()
