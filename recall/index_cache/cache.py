"""Per-process cache of recall indexes, one per character, kept up to date by the memory-change log.

Every write to recallable memory bumps ``Character.memory_version`` and logs the rows it touched
(``character_memory_changed``). A request compares the version it read with the one its cached index
reflects; when they differ it reads the log after the index's version and applies just those rows
(appends, edits, deletes, new vectors), so a change costs a query the rows that changed, whichever
process wrote it. Only a change without detail (an import) or a pruned log makes a request rebuild.
Tombstones and appended rows accumulate; past ``COMPACT_FRACTION`` of the index a rebuild runs on a
background thread while the old index keeps serving, then catches up with the log and takes its place.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import close_old_connections, connection

from nekomem.characters.selectors import memory_changes_since
from nekomem.embeddings import VectorSpace, get_embedder, trim_heap, vector_space
from nekomem.runtime.caches import CacheUsage
from nekomem.textproc import tokenizers_warm_up
from recall.engine import Candidate, RecallIndex
from recall.engine.vectors import unit_rows
from recall.selectors import (
    NOT_READ,
    RAW_TURN_POOL,
    RECALL_POOLS,
    NotRead,
    PoolReader,
    RawLogMarks,
    character_forgotten_version,
    character_incarnation,
    character_memory_version,
    raw_log_marks,
    raw_turn_candidates,
    raw_turns_covered_through,
    recall_characters,
    recall_pools,
    recent_recall_characters,
)
from recall.snapshots import snapshot_path, snapshot_read, snapshot_write, snapshots_remove

logger = logging.getLogger(__name__)

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
    build.join(wait)
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


class RecallIndexBuilding(Exception):
    """The character's index is still being built; recall answers with no results meanwhile."""


class _BuildThread(threading.Thread):
    """One character's load-or-build, off the request: requests wait for it a bounded time."""

    def __init__(
        self, *, character_id: int, stop_names: tuple[str, ...], space: VectorSpace | None, version: int
    ) -> None:
        super().__init__(name=f"recall-build-{character_id}", daemon=True)
        self.character_id = character_id
        self.stop_names = stop_names
        self.space = space
        self.version = version
        self.entry: _Entry | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
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


def _build_lock(character_id: int) -> threading.Lock:
    """One load or build per character at a time; concurrent requests wait and reuse it."""
    with _lock:
        return _build_locks.setdefault(character_id, threading.Lock())


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


def _raw_turns_sync(
    entry: _Entry,
    *,
    character_id: int,
    space: VectorSpace | None,
    covered: datetime | NotRead | None = NOT_READ,
    written: int | None = None,
) -> bool:
    """Add the raw log's new turns and drop those extraction has covered since (raw turns are not in the
    change log: they arrive on every turn, and the cursor moving is their only other change). False
    when the cursor went back. ``covered``: the cursor as the caller read it (read here if not);
    ``written``: the raw-log row count read with it, which spares the read when nothing was written
    since."""
    if entry.raw_live is None:  # just built or loaded: what it holds
        entry.raw_live = deque(sorted((when, key) for key, when in entry.index.pool_rows(RAW_TURN_POOL)))
        entry.raw_after = entry.raw_live[-1] if entry.raw_live else None
        if entry.raw_built is not None:
            entry.raw_covered, entry.raw_written = entry.raw_built.covered, entry.raw_built.written
    if isinstance(covered, NotRead):
        covered = raw_turns_covered_through(character_id=character_id)
    if entry.raw_covered is not None and (covered is None or covered < entry.raw_covered):
        return False
    removed: list[int] = []
    while entry.raw_live and covered is not None and entry.raw_live[0][0] <= covered:
        removed.append(entry.raw_live.popleft()[1])
    after = entry.raw_after
    if after is not None and covered is not None and after[0] < covered:
        after = (covered, 2**62)  # everything up to the cursor is covered anyway
    # The index has every row up to the count it keeps (``Character.raw_rows_written``, counted in the
    # transaction that writes the rows): the same count, or an older one read before another request's
    # read, means no new row, and no read.
    unread = written is None or entry.raw_written is None or written > entry.raw_written
    new: list[Candidate] = []
    if unread:
        new = list(raw_turn_candidates(character_id=character_id, space=space, after=after, covered=covered))
        counters["raw_turn_reads"] += 1
    if removed or new:
        entry.index.apply(pool=RAW_TURN_POOL, upserts=new, removed=removed)
        counters["raw_turn_rows"] += len(removed) + len(new)
    for c in new:
        assert c.created_at is not None and c.key is not None
        entry.raw_live.append((c.created_at, c.key))
    if entry.raw_live:
        entry.raw_after = entry.raw_live[-1]
    entry.raw_covered = covered
    if unread:
        entry.raw_written = written  # last: a failed read or apply leaves the count to read again
    return True


def _snapshot_path(*, character_id: int, model_id: str | None, stop_names: tuple[str, ...]) -> Path | None:
    incarnation = character_incarnation(character_id=character_id)
    if incarnation is None:
        return None
    return snapshot_path(
        character_id=character_id, incarnation=incarnation, model_id=model_id, stop_names=stop_names
    )


def _load(*, character_id: int, stop_names: tuple[str, ...], space: VectorSpace | None) -> _Entry | None:
    """The saved index caught up with the log, or None (no file, or a rebuild is needed anyway)."""
    model_id = space.model_id if space is not None else None
    path = _snapshot_path(character_id=character_id, model_id=model_id, stop_names=stop_names)
    saved = snapshot_read(path) if path is not None else None
    if saved is None:
        return None
    version, index = saved
    if version < (character_forgotten_version(character_id=character_id) or 0):
        # Saved before a deletion (by a process that was saving while it happened): it may hold the
        # forgotten text, so it goes rather than waits for the next save to replace it.
        assert path is not None
        path.unlink(missing_ok=True)
        counters["snapshots_forgotten"] += 1
        return None
    entry = _Entry(version=version, model_id=model_id, stop_names=stop_names, index=index)
    entry.saved_fills, entry.saved_changes = index.filled_vectors, index.changed_rows
    entry.saved_version = version
    with entry.lock:
        if not _catch_up(entry, character_id=character_id, space=space):
            return None
    counters["snapshot_loads"] += 1
    logger.info(
        "recall index loaded character=%s rows=%d version=%d", character_id, len(index), entry.version
    )
    return entry


def _build(
    *, character_id: int, stop_names: tuple[str, ...], space: VectorSpace | None, version: int, why: str
) -> _Entry:
    started = time.monotonic()
    marks = raw_log_marks(character_id=character_id)  # before the pools: never newer than they are
    index = RecallIndex(
        recall_pools(character_id=character_id, space=space),
        stop_names=stop_names,
        dim=space.dim if space is not None else None,
    )
    trim_heap()  # the build's temporaries, or a large index keeps them resident
    counters["full_builds"] += 1
    counters[f"full_builds_{why}"] += 1
    logger.info(
        "recall index built character=%s rows=%d version=%d why=%s ms=%d mb=%.1f",
        character_id,
        len(index),
        version,
        why,
        (time.monotonic() - started) * 1000,
        index.nbytes / 1e6,
    )
    model_id = space.model_id if space is not None else None
    entry = _Entry(version=version, model_id=model_id, stop_names=stop_names, index=index)
    entry.raw_built = marks
    _save(entry, character_id=character_id)
    return entry


def _save(entry: _Entry, *, character_id: int) -> None:
    path = _snapshot_path(character_id=character_id, model_id=entry.model_id, stop_names=entry.stop_names)
    if path is not None:
        version = entry.version  # read before the index is taken: never newer than what it holds
        entry.saved_fills = entry.index.filled_vectors
        entry.saved_changes = entry.index.changed_rows
        written = snapshot_write(path, version=version, index=entry.index)
        if written:
            entry.saved_version = version
        if written and version < (character_forgotten_version(character_id=character_id) or 0):
            # A deletion committed while this index (from before it) was being saved: drop the file.
            path.unlink(missing_ok=True)
            counters["snapshots_forgotten"] += 1


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


def _catch_up(entry: _Entry, *, character_id: int, space: VectorSpace | None) -> bool:
    """Apply the logged changes after the entry's version; False when only a rebuild is safe.

    Changed rows are applied here; vectors alone (the backfill's batches) are only noted, and a
    thread fills them in, off the request: a row without its vector yet is just not in the cosine
    pool for a moment, as it was before the vector was written.
    """
    started = time.monotonic()
    changes = memory_changes_since(character_id=character_id, version=entry.version)
    if not changes.complete:
        return False
    # Rows and vectors of a pool recall does not index (persona entries, reference §4.1) change nothing
    # here: the index holds none of them. Persona writes come with most sessions (promotion, mentions,
    # refine); read as "rebuild", each made the character's next query build its whole index on the
    # request (bench/years.py: that first query's p95 grew with the pools, x1.75 in two years).
    rows = {pool: keys for pool, keys in changes.rows.items() if pool in RECALL_POOLS}
    vectors = {pool: keys for pool, keys in changes.vectors.items() if pool in RECALL_POOLS}
    size = sum(len(keys) for keys in rows.values()) + sum(len(keys) for keys in vectors.values())
    if size > MAX_DELTA_ROWS:
        return False
    defer = settings.RECALL_BUILD_WAIT_SECONDS is not None
    removed = 0
    for pool, reader in RECALL_POOLS.items():
        changed = rows.get(pool, set())
        vector_keys = vectors.get(pool, set()) - changed
        if vector_keys and defer:
            entry.index.defer_vectors(pool, vector_keys)
            vector_keys = set()
        if not changed and not vector_keys:
            continue
        current = _current_rows(
            reader, character_id=character_id, space=space, rows=changed, vectors=vector_keys
        )
        upserts = current["upserts"]
        current["upserts"] = [c for c in upserts if not _already_held(entry.index, c)]
        counters["unchanged_rows"] += len(upserts) - len(current["upserts"])
        removed += len(current["removed"])
        entry.index.apply(pool=pool, **current)
    entry.version = changes.through
    if removed:
        _drop_forgotten_snapshots(entry, character_id=character_id)
    counters["deltas"] += 1
    counters["delta_rows"] += size
    logger.info(
        "recall index caught up character=%s rows=%d version=%d ms=%.1f",
        character_id,
        size,
        entry.version,
        (time.monotonic() - started) * 1000,
    )
    if entry.index.deferred_vectors and entry.served:
        # Before its first answer the entry fills them itself (``_vectors_complete``): a batch the
        # filler had taken would be missing from that answer.
        _vector_filler.request(entry, character_id=character_id, space=space)
    return True


def _already_held(index: RecallIndex, candidate: Candidate) -> bool:
    """The index's live row of ``candidate`` already says all of it (a logged change of a field recall
    does not read: a reflection's evidence or status between pending and confirmed). Replacing it
    cost a tombstone (its text block recompressed), a re-tokenised row and a step towards compaction,
    on the character's next query (bench/years.py: 1-3 of a session's 12-29 logged rows; the others
    change what recall reads). Ties rank by key, not by row, so keeping the row answers exactly as
    replacing it would."""
    row = index.row_of(candidate.pool, candidate.key) if candidate.key is not None else None
    if row is None or bool(index.has_vector[row]) != (candidate.vector is not None):
        return False
    if candidate.vector is not None:
        # A vector that moved by more than float32 rounding (the build keeps it as read, a catch-up as
        # normalised here) is a new vector. Int8 vectors (a large pool, no float matrix) are replaced.
        matrix = index.matrix
        if matrix is None:
            return False
        unit = unit_rows([candidate.vector], matrix.shape[1])[0][0]
        if not np.allclose(matrix[row], unit, rtol=0.0, atol=1e-6):
            return False
    return index.rows.candidate(row) == replace(candidate, vector=None)


def _drop_forgotten_snapshots(entry: _Entry, *, character_id: int) -> None:
    """Rows went: if one was forgotten (a deletion by any process, ``Character.forgotten_version``)
    after the snapshot this process saved or loaded, that file may hold its text, so it goes now
    rather than at the next save (a server whose var/ the deleting process does not share)."""
    saved = entry.saved_version
    if saved is None or saved >= (character_forgotten_version(character_id=character_id) or 0):
        return
    snapshots_remove(character_id=character_id)
    entry.saved_version = None
    counters["snapshots_forgotten"] += 1


def _current_rows(
    reader: PoolReader, *, character_id: int, space: VectorSpace | None, rows: set[int], vectors: set[int]
) -> dict:
    """``RecallIndex.apply`` arguments for changed ``rows`` and ``vectors`` of one pool, as stored now."""
    current = {
        c.key: c
        for c in reader(character_id=character_id, space=space, keys=rows | vectors)
        if c.key is not None
    }
    return {
        "upserts": [current[key] for key in sorted(rows) if key in current],
        "removed": [key for key in rows if key not in current],
        "vectors": {key: current[key].vector for key in vectors if key in current},
    }


FILL_BATCH = 64  # vectors read and filled between two looks at the queries in flight
FIRST_FILL_BATCH = 2000  # vectors read at a time when a first answer waits for them (one query each)

_in_flight = 0  # queries of this process being answered now
# Background fills and saves sleep on this until no query is in flight, rather than polling: up to
# one fill thread per character would wake, and ask a query for the interpreter lock, every few ms.
_quiet = threading.Condition(threading.Lock())


@contextmanager
def answering() -> Iterator[None]:
    """Mark a query in flight: this process's background fills give it the interpreter meanwhile."""
    global _in_flight
    with _quiet:
        _in_flight += 1
    try:
        yield
    finally:
        with _quiet:
            _in_flight -= 1
            if not _in_flight:
                _quiet.notify_all()


def _give_way(limit: float = 0.5) -> None:
    """Wait (a bounded time) while a query of this process is being answered: the fill competes with
    it for the interpreter lock, and can as well run a few milliseconds later."""
    with _quiet:
        _quiet.wait_for(lambda: not _in_flight, timeout=limit)


class _VectorFiller:
    """Fills the vectors that catch-ups deferred, for every index of this process, on one thread that
    keeps its database connection between fills. A thread per fill opened a connection per fill: on
    PostgreSQL a backend forked and its catalog caches warmed for a read of a few rows, several times
    a second under a chat load, which cost the machine more CPU than the fills themselves."""

    def __init__(self) -> None:
        self._wake = threading.Condition(threading.Lock())
        self._queue: deque[tuple[_Entry, int, VectorSpace | None]] = deque()
        self._thread: threading.Thread | None = None

    def request(self, entry: _Entry, *, character_id: int, space: VectorSpace | None) -> None:
        """Fill ``entry``'s deferred vectors soon (once: a request while it is queued or filling is
        covered by that fill, which looks again before it lets the entry go)."""
        with self._wake:
            if entry.filling:
                return
            entry.filling = True
            self._queue.append((entry, character_id, space))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="recall-vectors", daemon=True)
                self._thread.start()
            self._wake.notify()

    @contextmanager
    def holding(self, entry: _Entry, *, character_id: int, space: VectorSpace | None) -> Iterator[None]:
        """Fill ``entry``'s vectors on the caller's thread meanwhile: a catch-up does not hand them to
        the filler (which would take a batch the caller then misses). Held already (the filler is at
        it): nothing changes."""
        with self._wake:
            held = not entry.filling
            entry.filling = True
        try:
            yield
        finally:
            if held:
                with self._wake:
                    entry.filling = False
                if entry.index.deferred_vectors:  # deferred after the caller's fill
                    self.request(entry, character_id=character_id, space=space)

    def _has_work(self) -> bool:
        return bool(self._queue)

    def _run(self) -> None:
        while True:
            with self._wake:
                if not self._wake.wait_for(self._has_work, settings.RECALL_VECTOR_FILLER_IDLE_SECONDS):
                    connection.close()  # idle: the backend goes back until the next fill
                    self._wake.wait_for(self._has_work)
                entry, character_id, space = self._queue.popleft()
            close_old_connections()  # past CONN_MAX_AGE, or broken by a database restart
            filled = _fill_deferred_vectors(entry=entry, character_id=character_id, space=space)
            with self._wake:
                # Deferred after the fill's last look: again. After a failure, the next catch-up asks.
                if filled and entry.index.deferred_vectors:
                    self._queue.append((entry, character_id, space))
                else:
                    entry.filling = False


_vector_filler = _VectorFiller()


def _fill_deferred_vectors(
    *, entry: _Entry, character_id: int, space: VectorSpace | None, patient: bool = True
) -> bool:
    """Fill the vectors a catch-up noted, a small batch at a time, giving way to queries (unless not
    ``patient``: a query waits for them); the index is locked only to fill. A vector read just
    before an edit of its row is replaced by the edit's own change (the edited text's vector is
    written, and logged, after it). False when a read failed."""
    try:
        while taken := entry.index.take_deferred_vectors(FILL_BATCH if patient else FIRST_FILL_BATCH):
            if patient:
                _give_way()
            for pool, keys in taken.items():
                entry.index.apply(
                    pool=pool,
                    **_current_rows(
                        RECALL_POOLS[pool],
                        character_id=character_id,
                        space=space,
                        rows=set(),
                        vectors=keys,
                    ),
                )
                counters["deferred_vectors"] += len(keys)
    except Exception:
        logger.exception(
            "recall vectors not filled character=%s (the next compaction has them)", character_id
        )
        connection.close()  # a broken connection is opened anew by the next fill
        return False
    return True


def _maybe_compact(entry: _Entry, *, character_id: int, space: VectorSpace | None) -> None:
    """Rebuild on a background thread once enough rows changed; the old index serves meanwhile.
    Short of that, save it again once enough changed since the last save (the backfill's vectors), so
    a restart does not replay them."""
    index = entry.index
    unsaved = index.filled_vectors - entry.saved_fills + index.changed_rows - entry.saved_changes
    if not entry.saving and unsaved >= max(COMPACT_MIN_ROWS, COMPACT_FRACTION * len(index)):
        entry.saving = True
        threading.Thread(
            target=_save_in_background,
            kwargs={"entry": entry, "character_id": character_id},
            name=f"recall-save-{character_id}",
            daemon=True,
        ).start()
    if entry.compacting or index.changed_rows < max(COMPACT_MIN_ROWS, COMPACT_FRACTION * len(index)):
        return
    entry.compacting = True
    threading.Thread(
        target=_compact,
        kwargs={"character_id": character_id, "space": space, "stop_names": entry.stop_names},
        name=f"recall-compact-{character_id}",
        daemon=True,
    ).start()


def _compact(*, character_id: int, space: VectorSpace | None, stop_names: tuple[str, ...]) -> None:
    try:
        version = character_memory_version(character_id=character_id)
        if version is None:
            return
        fresh = _build(
            character_id=character_id,
            stop_names=stop_names,
            space=space,
            version=version,
            why="compaction",
        )
        fresh.served = True  # it takes the place of an entry that answers: the filler brings its vectors
        with fresh.lock:
            _catch_up(fresh, character_id=character_id, space=space)
        # Its version says what it holds, so even one a little behind the one it replaces is correct:
        # the next request catches it up.
        _store(character_id, fresh, replace=True)
    except Exception:
        logger.exception("recall index compaction failed character=%s", character_id)
        with _lock:
            entry = _cache.get(character_id)
            if entry is not None:
                entry.compacting = False
    finally:
        close_old_connections()
        connection.close()


def _save_in_background(*, entry: _Entry, character_id: int) -> None:
    try:
        # Started by a query's catch-up: the fork (the index's lock, ~20 ms at 100k rows) waits until
        # that query, and any other in flight, has its answer.
        _give_way()
        _save(entry, character_id=character_id)
    except Exception:
        logger.exception("recall snapshot failed character=%s", character_id)
    finally:
        entry.saving = False
        connection.close()


WARM_CHARACTERS = 4  # the most recently active characters whose index a starting worker loads
# Saved indexes a worker loads before it serves, at most this long in all (one at 100k rows: ~0.2 s).
SAVED_LOAD_BUDGET_SECONDS = 3.0


def recall_indexes_load_saved() -> int:
    """Before a worker serves: the tokenisers' dictionaries and the saved indexes of the most recently
    active characters, caught up with the log. Nothing is built here (a build runs in the background
    warm-up); returns how many indexes were loaded."""
    started = time.monotonic()
    tokenizers_warm_up()
    space = vector_space()
    loaded = 0
    for character in recent_recall_characters(limit=WARM_CHARACTERS):
        if time.monotonic() - started > SAVED_LOAD_BUDGET_SECONDS:
            break
        with _build_lock(character.pk):
            entry = _load(character_id=character.pk, stop_names=tuple(character.stop_names), space=space)
            if entry is None:
                continue
            with entry.lock:
                _raw_turns_sync(entry, character_id=character.pk, space=space)
            _store(character.pk, entry)
            loaded += 1
    return loaded


def recall_index_refresh(*, character_id: int) -> None:
    """Bring this process's index of the character, if it holds one, up to date now, its new vectors
    filled in here rather than by the filler: the turn embedder's vectors are in it before the next
    query comes. Other processes take them at their next query (the change log)."""
    with _lock:
        entry = _cache.get(character_id)
    if entry is None:
        return
    characters = recall_characters(ids=[character_id])
    if not characters:
        return
    character = characters[0]
    space = vector_space()
    with _vector_filler.holding(entry, character_id=character_id, space=space):
        recall_index(
            character_id=character_id,
            stop_names=character.stop_names,
            space=space,
            version=character.memory_version,
            covered=character.raw_covered,
            raw_written=character.raw_written,
            patient=True,
        )
        with _lock:
            current = _cache.get(character_id)
        if current is entry and entry.index.deferred_vectors:
            _fill_deferred_vectors(entry=entry, character_id=character_id, space=space, patient=False)


def recall_indexes_prepare(character_ids: list[int]) -> None:
    """After an import: each character's index brought up to date here (loaded and caught up with the
    import's logged rows, or built) and saved, so the server's first query after even a large import
    loads it (~0.2 s at 100k rows) or applies the few rows the import wrote, instead of building."""
    if not character_ids:
        return
    space = vector_space()
    for character in recall_characters(ids=character_ids):
        recall_index(
            character_id=character.pk,
            stop_names=character.stop_names,
            space=space,
            version=character.memory_version,
            patient=True,
        )
        with _lock:
            entry = _cache.get(character.pk)
        if entry is not None and entry.index.changed_rows != entry.saved_changes:
            with entry.lock:
                _save(entry, character_id=character.pk)  # caught up with rows the saved file lacks


def recall_indexes_save_vectors(character_ids: list[int]) -> int:
    """After the backfill embedded many rows of these characters (an import's): each one's saved index
    completed with the vectors and saved again, here (a task worker, off every request). A worker that
    loads it then (a start, an eviction) has them without reading them: filling costs ~0.3 ms a vector
    on a loaded machine (20 000: 6 s), a rebuild twice that, a load ~0.2 s at 100k rows. An index this
    process did not hold is let go once saved. Returns how many were saved."""
    if not character_ids:
        return 0
    space = vector_space()
    saved = 0
    for character in recall_characters(ids=character_ids):
        with _lock:
            held = character.pk in _cache
        recall_index(
            character_id=character.pk,
            stop_names=character.stop_names,
            space=space,
            version=character.memory_version,
            patient=True,
        )
        with _lock:
            entry = _cache.get(character.pk)
        if entry is None:
            continue
        if entry.index.deferred_vectors:
            with _vector_filler.holding(entry, character_id=character.pk, space=space):
                _fill_deferred_vectors(entry=entry, character_id=character.pk, space=space, patient=False)
        index = entry.index
        if (index.filled_vectors, index.changed_rows) != (entry.saved_fills, entry.saved_changes):
            with entry.lock:
                _save(entry, character_id=character.pk)
            saved += 1
        if not held:
            with _lock:
                if _cache.get(character.pk) is entry:
                    del _cache[character.pk]
    return saved


def recall_indexes_warm_up() -> None:
    """Load the model and bring the indexes of the most recently active characters up to date (those
    without a saved index are built here), so a restarted worker's queries find them ready. The
    indexes need only the model's identity: a query that comes before the model answers by BM25."""
    characters = recent_recall_characters(limit=WARM_CHARACTERS)
    with ThreadPoolExecutor(1, thread_name_prefix="warm-up-model") as model:
        loading = model.submit(get_embedder)
        space = vector_space()
        for character in characters:
            recall_index(
                character_id=character.pk,
                stop_names=character.stop_names,
                space=space,
                version=character.memory_version,
                patient=True,
            )
        loading.result()


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


def character_forget(character_id: int) -> None:
    """The character was renamed or deleted: drop its index here and the ones saved on disk."""
    with _lock:
        _cache.pop(character_id, None)
    snapshots_remove(character_id=character_id)


def recall_forget_apply(character_id: int) -> dict[str, int]:
    """After a deletion: this process's index applies it (its rows tombstoned and their text blanked)
    before the delete returns, and the saved snapshots, which may hold the text, are dropped; the index
    just brought up to date is saved in their place. Other workers apply the change at their next query
    (the change log), and drop a snapshot older than the deletion instead of loading it."""
    characters = recall_characters(ids=[character_id])
    if not characters:  # the whole character went
        with _lock:
            held = _cache.pop(character_id, None) is not None
        return {"recall_indexes": int(held), "index_snapshots": snapshots_remove(character_id=character_id)}
    character = characters[0]
    with _lock:
        held = character_id in _cache
    if held:
        recall_index(
            character_id=character_id,
            stop_names=character.stop_names,
            space=vector_space(),
            version=character.memory_version,
            patient=True,
        )
    dropped = snapshots_remove(character_id=character_id)
    with _lock:
        entry = _cache.get(character_id)
    if entry is not None and dropped and entry.version >= character.memory_version:
        with entry.lock:
            _save(entry, character_id=character_id)
    return {"recall_indexes": int(held), "index_snapshots": dropped}
