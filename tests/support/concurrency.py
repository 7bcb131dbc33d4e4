"""Real concurrency on PostgreSQL: work on other connections, in other threads, that commits for real.

For tests marked ``pytest.mark.django_db(transaction=True)`` and skipped on SQLite, where every
writer waits for the one database write lock and the lock interleavings below cannot happen. The
interleavings are made with the real locks (``lock_character``) and observed in ``pg_locks``, never
by patching our code.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Generic, TypeVar

import pytest
from django.db import connection, transaction

from nekomem.characters.locks import lock_character

T = TypeVar("T")
U = TypeVar("U")

postgresql_only = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="row locks and deferred FK checks: PostgreSQL only"
)


def backend_pid() -> int:
    """This thread's database session, as ``pg_locks`` and ``pg_stat_activity`` name it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def waits_for_a_lock(pid: int) -> bool:
    """Whether session ``pid`` is waiting for a lock (a row, a transaction id, an advisory key)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = %s AND NOT granted)"
            " OR EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = %s AND wait_event_type = 'Lock')",
            [pid, pid],
        )
        return bool(cursor.fetchone()[0])


def wait_until_waiting(pid: Callable[[], int | None], *, timeout: float = 10) -> bool:
    """Poll until session ``pid()`` waits for a lock; False after ``timeout`` seconds. ``pid`` is a
    callable because the other thread learns its session only once it has started."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        current = pid()
        if current is not None and waits_for_a_lock(current):
            return True
        time.sleep(0.01)
    return False


@contextmanager
def lock_timeout(milliseconds: int) -> Iterator[None]:
    """Fail with LockNotAvailable instead of waiting longer than ``milliseconds`` for a lock, for the
    rest of the surrounding transaction (``SET LOCAL``)."""
    if not connection.in_atomic_block:
        raise RuntimeError("lock_timeout must be used inside transaction.atomic")
    with connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL lock_timeout = {int(milliseconds)}")
    yield


class OnOwnConnection(Generic[T]):
    """``work`` in a thread of its own, on that thread's own database connection (closed after).
    Runs on SQLite too; ``pid`` is then None."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._work = work
        self.pid: int | None = None
        self.result: T | None = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            if connection.vendor == "postgresql":  # SQLite has no sessions to watch
                self.pid = backend_pid()
            self.result = self._work()
        except BaseException as exc:  # handed to the test thread, which alone can fail the test
            self.error = exc
        finally:
            connection.close()

    def start(self) -> OnOwnConnection[T]:
        self._thread.start()
        return self

    def join(self, timeout: float = 60) -> T | None:
        """Wait for the work; re-raises its exception, and fails if it is still running."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"work on its own connection still running after {timeout} s")
        if self.error is not None:
            raise self.error
        return self.result

    def outcome(self, timeout: float = 60) -> T | BaseException | None:
        """What ``join`` returns or raises, returned: for asserting that both sides of a race ended well."""
        try:
            return self.join(timeout)
        except BaseException as exc:
            return exc


def on_own_connection(work: Callable[[], T]) -> OnOwnConnection[T]:
    """Start ``work`` on its own connection in a thread; ``join()`` it for its result."""
    return OnOwnConnection(work).start()


@dataclass
class Raced(Generic[T, U]):
    """How both sides of ``create_while_locked`` ended: a result, or the exception raised."""

    created: T | BaseException | None
    held: U | BaseException | None
    creator_waited: bool  # the creator was seen waiting while the holder had the lock

    @property
    def errors(self) -> list[BaseException]:
        return [side for side in (self.created, self.held) if isinstance(side, BaseException)]


def create_while_locked(
    *, character_id: int, create: Callable[[], T], then: Callable[[], U], timeout: float = 10
) -> Raced[T, U]:
    """Hold the character lock in one transaction while ``create`` runs on another connection; once
    the creator waits for a lock (or ``timeout`` passes), run ``then`` inside the holder's
    transaction, still under the lock, and commit.

    The interleaving of a worker that holds the character lock and writes a row (an import, a sweep)
    with a creator of the same row arriving meanwhile (a background tick).
    """
    creator: list[OnOwnConnection[T]] = []

    def hold() -> tuple[U, bool]:
        with transaction.atomic():
            lock_character(character_id)
            creator.append(on_own_connection(create))
            waited = wait_until_waiting(lambda: creator[0].pid, timeout=timeout)
            return then(), waited

    holder = on_own_connection(hold)
    held = holder.outcome()
    created = creator[0].outcome() if creator else None
    if isinstance(held, BaseException):
        return Raced(created=created, held=held, creator_waited=False)
    assert held is not None
    return Raced(created=created, held=held[0], creator_waited=held[1])
