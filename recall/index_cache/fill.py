"""Vectors a catch-up deferred, filled off the request by one thread, giving way to the queries in
flight."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import close_old_connections, connection

from nekomem.embeddings import VectorSpace
from recall.index_cache.entries import _Entry, counters
from recall.selectors import RECALL_POOLS, PoolReader

logger = logging.getLogger(__name__)

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
