"""A character's index for a request: the cached entry caught up, loaded, or built on a thread the
request waits for a bounded time."""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime

from django.conf import settings
from django.db import connection

from nekomem.embeddings import VectorSpace
from recall.engine import RecallIndex
from recall.index_cache.catch_up import _catch_up, _raw_turns_sync
from recall.index_cache.entries import (
    RecallIndexBuilding,
    _build_lock,
    _cache,
    _Entry,
    _lock,
    _store,
    counters,
)
from recall.index_cache.fill import _fill_deferred_vectors
from recall.index_cache.saved import _build, _load, _maybe_compact
from recall.selectors import NOT_READ, NotRead, character_memory_version
from recall.snapshots import BUILDING_CLAIM_SECONDS, build_claimed

logger = logging.getLogger(__name__)


def recall_index(
    *,
    character_id: int,
    stop_names: list[str],
    space: VectorSpace | None,
    version: int | None = None,
    covered: datetime | NotRead | None = NOT_READ,
    raw_written: int | None = None,
    patient: bool = False,
) -> RecallIndex:
    """The character's index, brought up to ``version`` (by the logged rows, or rebuilt) and to the raw
    log's uncovered turns.

    ``version`` is the ``memory_version`` the caller read (before this call) with the character,
    ``covered`` extraction's cursor and ``raw_written`` its raw-log row count read with it; without
    them, they are read here (without the count, the new raw turns are read). A request waits for
    a build at most ``RECALL_BUILD_WAIT_SECONDS`` (then ``RecallIndexBuilding``); a ``patient`` caller
    (a warm-up, off the request path) builds here. The entry's first answer (not a patient caller's)
    waits for the vectors its catch-ups deferred (``_vectors_complete``).
    """
    if version is None:
        version = character_memory_version(character_id=character_id)
    if version is None:
        return RecallIndex([])
    names = tuple(stop_names)
    entry = _entry_at(
        character_id=character_id, stop_names=names, space=space, version=version, patient=patient
    )
    with entry.lock:
        if _raw_turns_sync(
            entry, character_id=character_id, space=space, covered=covered, written=raw_written
        ):
            if not entry.served and not patient:
                _vectors_complete(entry, character_id=character_id, space=space)
            return entry.index
    # Extraction's cursor went back (a reset): only a rebuild knows which turns are uncovered again.
    fresh = _build(character_id=character_id, stop_names=names, space=space, version=version, why="raw")
    with fresh.lock:
        _raw_turns_sync(fresh, character_id=character_id, space=space)
        if not patient:
            _vectors_complete(fresh, character_id=character_id, space=space)
    _store(character_id, fresh, replace=True)
    return fresh.index


def _vectors_complete(entry: _Entry, *, character_id: int, space: VectorSpace | None) -> None:
    """Before an entry's first answer (an index just loaded, built or prepared: after an import, a
    restart or an eviction), fill the vectors its catch-up deferred, here. A saved index is often older
    than the vectors (an import saves it before the backfill embeds a row), and a deferred fill starts
    at the first query and yields to every later one: the character's first answers were BM25 alone
    with every vector in the database (MemoryBank sets: −0.05–0.07 on those queries). Later answers
    leave new vectors to the filler, so a backfill's batches never hold a chat query."""
    if entry.index.deferred_vectors:
        started = time.monotonic()
        filled = _fill_deferred_vectors(entry=entry, character_id=character_id, space=space, patient=False)
        counters["first_answer_fills"] += 1
        logger.info(
            "recall vectors completed before the first answer character=%s ok=%s ms=%.1f",
            character_id,
            filled,
            (time.monotonic() - started) * 1000,
        )
        # Saved again with them once they are many, so the next start loads them from the file.
        _maybe_compact(entry, character_id=character_id, space=space)
    entry.served = True


def _entry_at(
    *,
    character_id: int,
    stop_names: tuple[str, ...],
    space: VectorSpace | None,
    version: int,
    patient: bool = False,
) -> _Entry:
    model_id = space.model_id if space is not None else None
    names = stop_names
    with _lock:
        entry = _cache.get(character_id)
        if entry is not None:
            _cache.move_to_end(character_id)
    if entry is not None and entry.serves(model_id, names):
        if entry.version >= version:
            return entry
        with entry.lock:
            if entry.version >= version or _catch_up(entry, character_id=character_id, space=space):
                _maybe_compact(entry, character_id=character_id, space=space)
                return entry
    wait = settings.RECALL_BUILD_WAIT_SECONDS
    if wait is None or patient:
        return _load_or_build(character_id=character_id, stop_names=names, space=space, version=version)
    loaded = _load_here(character_id=character_id, stop_names=names, space=space, version=version)
    if loaded is not None:
        return loaded
    with _lock:
        build = _builds.get(character_id)
        if build is None:
            build = _builds[character_id] = _BuildThread(
                character_id=character_id, stop_names=names, space=space, version=version
            )
            build.start()
    # The request that started the build waits for it a while (a small pool's build ends within it);
    # once a build has outlasted that, the next requests do not wait again (2 s each, every query
    # while a 100k build ran): they are answered at once, from the rows meanwhile.
    # A build another process claimed (an import's, by the task cluster) takes longer than any wait.
    waits = time.monotonic() - build.started < wait and not build_claimed(character_id=character_id)
    build.join(wait if waits else 0.0)
    if build.is_alive():
        # An import (or a pruned log) of a large pool: serve what this process had meanwhile, or
        # answer "building" rather than hold a chat request for the length of a build.
        if entry is not None and entry.serves(model_id, names):
            counters["stale_answers"] += 1
            return entry
        raise RecallIndexBuilding(character_id)
    if build.error is not None:
        raise build.error
    assert build.entry is not None
    if build.entry.version < version or not build.entry.serves(model_id, names):
        # Built for an older version or another model: the next request catches up or builds again.
        return _entry_at(character_id=character_id, stop_names=names, space=space, version=version)
    return build.entry


def _load_here(
    *, character_id: int, stop_names: tuple[str, ...], space: VectorSpace | None, version: int
) -> _Entry | None:
    """The saved index, loaded and caught up on the request's own thread, or None (no file, a rebuild
    needed, or a load or build of this character already running: the build thread's path then).
    A load takes milliseconds (2 000 rows: ~10 ms); on a build thread it waited as long again for
    that thread's new database connection (5-30 ms on PostgreSQL), on every first query of a
    character the worker did not hold (bench/many_characters.py)."""
    model_id = space.model_id if space is not None else None
    lock = _build_lock(character_id)
    if not lock.acquire(blocking=False):
        return None
    try:
        with _lock:
            entry = _cache.get(character_id)
        if entry is not None and entry.serves(model_id, stop_names) and entry.version >= version:
            return entry
        fresh = _load(character_id=character_id, stop_names=stop_names, space=space)
        if fresh is None or fresh.version < version:
            return None
        counters["loads_on_request"] += 1
        _store(character_id, fresh)
        return fresh
    finally:
        lock.release()


class _BuildThread(threading.Thread):
    """One character's load-or-build, off the request: requests wait for it a bounded time."""

    def __init__(
        self, *, character_id: int, stop_names: tuple[str, ...], space: VectorSpace | None, version: int
    ) -> None:
        super().__init__(name=f"recall-build-{character_id}", daemon=True)
        self.started = time.monotonic()
        self.character_id = character_id
        self.stop_names = stop_names
        self.space = space
        self.version = version
        self.entry: _Entry | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            _await_claimed_build(self.character_id)
            self.entry = _load_or_build(
                character_id=self.character_id,
                stop_names=self.stop_names,
                space=self.space,
                version=self.version,
            )
        except BaseException as exc:
            self.error = exc
        finally:
            with _lock:
                if _builds.get(self.character_id) is self:
                    del _builds[self.character_id]
            connection.close()


_builds: dict[int, _BuildThread] = {}


def _await_claimed_build(character_id: int) -> None:
    """Another process builds this index (the task cluster, after an import): wait until it has saved
    it, then load it (``_load_or_build``) rather than build the same index beside it. Requests are
    answered meanwhile from the rows that hold their words (``recall.interim``)."""
    started = time.monotonic()
    while build_claimed(character_id=character_id):
        if time.monotonic() - started > BUILDING_CLAIM_SECONDS:
            return
        time.sleep(CLAIM_POLL_SECONDS)
    if time.monotonic() - started > CLAIM_POLL_SECONDS:
        counters["claimed_builds_awaited"] += 1


CLAIM_POLL_SECONDS = 0.25


def _load_or_build(
    *, character_id: int, stop_names: tuple[str, ...], space: VectorSpace | None, version: int
) -> _Entry:
    model_id = space.model_id if space is not None else None
    with _build_lock(character_id):
        with _lock:
            entry = _cache.get(character_id)
        if entry is not None and entry.serves(model_id, stop_names) and entry.version >= version:
            return entry
        fresh = _load(character_id=character_id, stop_names=stop_names, space=space)
        if fresh is None:
            fresh = _build(
                character_id=character_id,
                stop_names=stop_names,
                space=space,
                version=version,
                why="request",
            )
        _store(character_id, fresh)
    return fresh
