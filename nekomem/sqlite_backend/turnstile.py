"""The embedded default's writer turn: a futex turnstile for SQLite's write transactions.

The third lock of ``nekomem/characters/locks.py``, taken just before ``BEGIN IMMEDIATE`` by the SQLite
backend (``nekomem/sqlite_backend/base.py``) and given back at its COMMIT or ROLLBACK. Writers sleep
in the kernel until the turn is given back, and wake at that moment; SQLite's own busy handler, which
it replaces, polls after sleeps of 1, 2, 5, 10, 15 … ms and so rounds every wait up to the next step.
It lives here, not with the other locks, because Django loads the backend before any model: this
module imports nothing of the kernel.
"""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os
import platform
import sys
import threading
import time
from contextlib import suppress
from pathlib import Path

# Descriptors holding a writer turn in this process. A forked child inherits them, and the turn is
# given back only once every copy is closed, so the child closes its copies at once (closing, not
# unlocking: an unlock through a copy would give back the parent's turn).
_writer_turns_held: set[int] = set()
_writer_turns_guard = threading.Lock()


def _forget_inherited_writer_turns() -> None:
    global _writer_turns_guard
    _writer_turns_guard = threading.Lock()  # another thread of the parent may have held it
    for fd in _writer_turns_held:
        with suppress(OSError):
            os.close(fd)
    _writer_turns_held.clear()


os.register_at_fork(after_in_child=_forget_inherited_writer_turns)


class WriterTurnTimeout(TimeoutError):
    """The writer turn did not come within the database's timeout (SQLite's "database is locked")."""


class _TurnsGiven:
    """A counter in a page shared by every process using one database, bumped at each turn given back:
    a waiter sleeps on it (a futex) until it moves, so it wakes the moment the turn is free."""

    # A holder killed with SIGKILL gives its turn back without a bump: waiters look again this often.
    LOOK_AGAIN_SECONDS = 0.05

    def __init__(self, path: str) -> None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if os.fstat(fd).st_size < mmap.PAGESIZE:
                os.ftruncate(fd, mmap.PAGESIZE)  # zeros; a second process doing the same changes nothing
            self._page = mmap.mmap(fd, mmap.PAGESIZE)
        finally:
            os.close(fd)
        self._count = ctypes.c_uint32.from_buffer(self._page)
        self._address = ctypes.addressof(self._count)

    def seen(self) -> int:
        return self._count.value

    def wait_while(self, seen: int, seconds: float) -> None:
        """Sleep until the count moves from ``seen``, for at most ``seconds``."""
        seconds = min(seconds, self.LOOK_AGAIN_SECONDS)
        if _SYS_FUTEX is None:
            time.sleep(min(seconds, 0.001))
            return
        timeout = _Timespec(int(seconds), int((seconds % 1) * 1e9))
        _futex(self._address, _FUTEX_WAIT, seen, ctypes.addressof(timeout))

    def bump(self) -> None:
        """After the turn is given back: a waiter that read the count before this sees it move. Two
        bumps at once may count one; a waiter then misses that wake and looks again after
        ``LOOK_AGAIN_SECONDS``."""
        self._count.value = (self._count.value + 1) & 0xFFFFFFFF
        if _SYS_FUTEX is not None:
            _futex(self._address, _FUTEX_WAKE, 0x7FFFFFFF, 0)


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


_libc = ctypes.CDLL(None, use_errno=True)  # ctypes lets the interpreter lock go during the call
_SYS_FUTEX = {"x86_64": 202, "aarch64": 98}.get(platform.machine()) if sys.platform == "linux" else None
_FUTEX_WAIT, _FUTEX_WAKE = 0, 1  # not the _PRIVATE forms: the word is shared between processes


def _futex(address: int, operation: int, value: int, timeout_address: int) -> None:
    # syscall(2) is variadic: every argument goes as a full machine word.
    assert _SYS_FUTEX is not None, "callers check for futex support"
    word = ctypes.c_long
    _libc.syscall(
        word(_SYS_FUTEX),
        ctypes.c_void_p(address),
        word(operation),
        word(value),
        ctypes.c_void_p(timeout_address or None),
        None,
        word(0),
    )


_turns_given: dict[str, _TurnsGiven] = {}


def _turns_given_for(path: str) -> _TurnsGiven:
    with _writer_turns_guard:
        given = _turns_given.get(path)
        if given is None:
            given = _turns_given[path] = _TurnsGiven(path)
        return given


def sqlite_writer_turn(database: str, *, timeout: float) -> int:
    """Wait for the turn to write to the SQLite ``database``; returns the descriptor that holds it,
    for ``sqlite_writer_turn_release``. Raises ``WriterTurnTimeout`` after ``timeout`` seconds.

    An exclusive ``flock`` on a file beside the database, one open file per turn, so two connections
    of one process queue like two processes, and a holder that dies gives the turn back. A blocking
    ``flock`` cannot be given a timeout, and a writer must fail as SQLite's own timeout fails rather
    than wait forever, so a waiter tries without blocking and sleeps in the kernel on ``_TurnsGiven``
    between tries.
    """
    path = f"{Path(database)}.writers"
    given = _turns_given_for(path)
    deadline = time.monotonic() + timeout
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        while True:
            seen = given.seen()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                pass
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WriterTurnTimeout(f"database is locked: no writer turn within {timeout:g} s")
            given.wait_while(seen, remaining)
    except BaseException:
        os.close(fd)
        raise
    with _writer_turns_guard:
        _writer_turns_held.add(fd)
    return fd


def sqlite_writer_turn_release(database: str, fd: int) -> None:
    """Give back the turn ``sqlite_writer_turn`` returned, and wake whoever waits for it."""
    with _writer_turns_guard:
        _writer_turns_held.discard(fd)
    os.close(fd)  # closing the last descriptor of the open file gives the flock back
    _turns_given_for(f"{Path(database)}.writers").bump()
