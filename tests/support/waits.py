"""Waiting for the moment a thread blocks on a lock, so a test can then assert that nothing happened
instead of sleeping a fixed time and hoping the other thread got that far.

On PostgreSQL the waiting session shows in ``pg_locks``; on the embedded default (SQLite) the locks
are the kernel's own, and the thread is seen calling their blocking wait.
"""

from __future__ import annotations

import sys
import threading
import time
from types import FrameType
from typing import Any

from django.db import connection

# The blocking waits of the embedded default's locks (nekomem/characters/locks.py): the writer turn's
# sleep after ``flock`` refused it, and the settle lock's blocking ``flock``.
WRITER_TURN_WAIT = "wait_while"
SETTLE_LOCK_WAIT = "flock"


class CallProbe:
    """Call ``install()`` first thing in the thread to watch; ``wait()`` returns True once that thread
    calls a function named in ``calls`` (Python or builtin), False after ``timeout`` seconds."""

    def __init__(self, *calls: str) -> None:
        self._calls = frozenset(calls)
        self._reached = threading.Event()

    def install(self) -> None:
        sys.setprofile(self._profile)  # this thread only

    def _profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            name = frame.f_code.co_name
        elif event == "c_call":
            name = getattr(arg, "__name__", "")
        else:
            return
        if name in self._calls:
            self._reached.set()
            sys.setprofile(None)

    def wait(self, timeout: float = 10) -> bool:
        return self._reached.wait(timeout)


class LockWaitProbe(CallProbe):
    """A ``CallProbe`` for a thread that waits for a database lock. On PostgreSQL it waits instead
    until another session of the test database waits in ``pg_locks`` (a request in the thread may
    open a session of its own, so the session is not known in advance); on SQLite until the thread
    calls one of ``sqlite_waits``."""

    def install(self) -> None:
        if connection.vendor != "postgresql":
            super().install()

    def wait(self, timeout: float = 10) -> bool:
        if connection.vendor != "postgresql":
            return super().wait(timeout)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if _another_session_waits():
                return True
            time.sleep(0.01)
        return False


def _another_session_waits() -> bool:
    with connection.cursor() as cursor:
        # Inside a transaction pg_stat_activity is read once and kept; this looks afresh.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = current_database()"
            " AND a.pid <> pg_backend_pid() AND (a.wait_event_type = 'Lock'"
            " OR EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND NOT l.granted)))"
        )
        return bool(cursor.fetchone()[0])
