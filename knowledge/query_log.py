"""The diagnostics row of each knowledge query, written off the answer (issue 48).

On SQLite every write waits for the database's one write lock, which an import's build transactions
hold in turns: a lookup that wrote its own row waited for them (68 ms p95 during a 5 000-entry import
for a 10 ms search). A lookup queues its row; a server process writes the queue on one daemon thread,
started with the server's warm-ups (``knowledge_query_log_start``), in one transaction a batch. A
reader of the diagnostics writes this process's queue first, on its own connection, so it always sees
its own queries; in a process that runs no writer (a management command, a test in one transaction)
that is the only write, so no row is ever committed past the caller's transaction. A storage block
leaves the rows queued; the queue is bounded, the oldest dropped first.

The writer gathers rows for a while and writes them between requests: a write per lookup (a
connection, the insert, the trim) took a third of the serving thread's CPU beside it, and on two cores
with an import job running it made the requests queue for the CPU (``bench/knowledge_speed.py``).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from typing import Any

from django.db import connections, transaction

from knowledge.models import QueryRecord
from nekomem.runtime.foreground import foreground_wait
from nekomem.runtime.state import storage_writes_allowed

logger = logging.getLogger(__name__)

PENDING_MAX = 200
# A write that failed (or waits for a storage block to end) is tried again after this long.
RETRY_SECONDS = 1.0
# How long a reader waits for the writer's batch in flight before writing it itself: on SQLite the
# writer can wait long for the lock (a test's transaction holds it until it ends).
FLUSH_WAIT_SECONDS = 1.0
STOP_SECONDS = 10.0
# How long the writer gathers rows after the first one before it writes them all.
GATHER_SECONDS = 1.0
# How long it then waits for no request of its process to be under way.
BEHIND_REQUESTS_SECONDS = 0.1
# How long the writer waits for its turn to write to SQLite before it tries again later: not the
# database's 30 s, so it never sits long on a connection (a test's transaction holds the turn until
# the test ends, and the writer must stop before the test's database goes).
WRITER_TURN_SECONDS = 0.5


def diagnostics_trim(model: Any) -> None:
    from knowledge.selectors import DIAGNOSTICS_KEPT

    keep = list(model.objects.order_by("-created_at", "-id").values_list("pk", flat=True)[:DIAGNOSTICS_KEPT])
    if len(keep) == DIAGNOSTICS_KEPT:
        model.objects.filter(pk__lt=min(keep)).delete()


def _write(batch: list[dict[str, Any]]) -> None:
    with transaction.atomic():
        QueryRecord.objects.bulk_create([QueryRecord(**fields) for fields in batch])
        diagnostics_trim(QueryRecord)


class _QueryLog:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._pending: deque[dict[str, Any]] = deque()
        self._in_flight = False
        self._dropped = 0
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()

    def add(self, fields: dict[str, Any]) -> None:
        with self._lock:
            if len(self._pending) >= PENDING_MAX:
                self._pending.popleft()
                self._dropped += 1
                if self._dropped == 1 or self._dropped % PENDING_MAX == 0:
                    logger.warning("knowledge query records dropped (queue full): %d so far", self._dropped)
            self._pending.append(fields)
        self._wake.set()

    def start(self) -> None:
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stop = threading.Event()
            self._thread = threading.Thread(
                target=self._run, args=(self._stop,), name="knowledge-query-log", daemon=True
            )
            self._thread.start()

    def flush(self) -> None:
        """Write this process's queued rows on the caller's connection (during a storage block they
        stay queued)."""
        if not storage_writes_allowed():
            return
        with self._lock:
            self._changed.wait_for(lambda: not self._in_flight, FLUSH_WAIT_SECONDS)
            batch = list(self._pending)
            self._pending.clear()
        if not batch:
            return
        try:
            _write(batch)
        except Exception:
            logger.warning("could not record %d knowledge queries", len(batch), exc_info=True)
            self._requeue(batch)

    def forget(self) -> None:
        """Drop the queue and stop the writer, its connection closed (tests: before their database
        goes)."""
        with self._lock:
            self._pending.clear()
            self._stop.set()
            thread, self._thread = self._thread, None
        self._wake.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(STOP_SECONDS)

    def _requeue(self, batch: list[dict[str, Any]]) -> None:
        with self._lock:
            room = PENDING_MAX - len(self._pending)
            self._pending.extendleft(reversed(batch[-room:] if room > 0 else []))

    def _run(self, stop: threading.Event) -> None:
        wrapper = connections["default"]
        if wrapper.vendor == "sqlite":
            # This thread's own wrapper: the settings are copied, never changed for the others.
            options = {**wrapper.settings_dict.get("OPTIONS", {}), "timeout": WRITER_TURN_SECONDS}
            wrapper.settings_dict = {**wrapper.settings_dict, "OPTIONS": options}
        while not stop.is_set():
            with self._lock:
                waiting = bool(self._pending)
            self._wake.wait(RETRY_SECONDS if waiting else None)
            self._wake.clear()
            if stop.wait(GATHER_SECONDS):
                break
            foreground_wait(BEHIND_REQUESTS_SECONDS)
            with self._lock:
                batch = list(self._pending)
                self._in_flight = bool(batch)
            if not batch or not storage_writes_allowed():
                self._done_in_flight()
                continue
            try:
                _write(batch)
            except Exception as exc:
                # Kept queued and tried again: during an import the turn is often taken.
                logger.info("knowledge query records wait (%s): %d queued", type(exc).__name__, len(batch))
                self._done_in_flight()
            else:
                self._done_in_flight(written=batch)
            finally:
                # The writer's connection closes after each drain: none stays open while it sleeps.
                connections.close_all()

    def _done_in_flight(self, written: list[dict[str, Any]] | None = None) -> None:
        with self._lock:
            if written:
                # A reader that waited too long took the queue meanwhile and wrote it itself.
                ids = {id(fields) for fields in written}
                self._pending = deque(fields for fields in self._pending if id(fields) not in ids)
            self._in_flight = False
            self._changed.notify_all()


_log = _QueryLog()


def knowledge_query_record(**fields: Any) -> None:
    """Queue one query's diagnostics row (``QueryRecord`` fields); never waits for the database."""
    _log.add(fields)


def knowledge_query_log_flush() -> None:
    _log.flush()


def knowledge_query_log_start() -> None:
    """Write queued rows on a daemon thread of this process from now on (a server's warm-up)."""
    _log.start()


def knowledge_query_log_forget() -> None:
    _log.forget()
