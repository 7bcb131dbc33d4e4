"""Django's SQLite backend, each write transaction waiting for its writer turn before ``BEGIN``.

Every transaction on the embedded default begins ``IMMEDIATE`` (settings), so at most one writes at a
time. Without a queue, a writer that finds the database locked sleeps in SQLite's busy handler and
polls; under load a /cache turn then waits up to the next step of its 1, 2, 5, 10, 15 … ms schedule
after the holder has committed. ``nekomem.sqlite_backend.turnstile.sqlite_writer_turn`` wakes it at once.
"""

from __future__ import annotations

from typing import Any

from django.db import OperationalError
from django.db.backends.sqlite3 import base

from nekomem.sqlite_backend.turnstile import WriterTurnTimeout, sqlite_writer_turn, sqlite_writer_turn_release

_DEFAULT_TIMEOUT_SECONDS = 5.0  # sqlite3.connect's own default


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._writer_turn: int | None = None

    def _queues_writers(self) -> bool:
        # A database in memory lives in one process, where SQLite's own lock serves.
        return getattr(self, "transaction_mode", None) == "IMMEDIATE" and not self.is_in_memory_db()

    def _start_transaction_under_autocommit(self) -> None:
        if self._queues_writers() and self._writer_turn is None:
            timeout = float(self.settings_dict["OPTIONS"].get("timeout", _DEFAULT_TIMEOUT_SECONDS))
            try:
                self._writer_turn = sqlite_writer_turn(self.settings_dict["NAME"], timeout=timeout)
            except WriterTurnTimeout as waited_too_long:
                raise OperationalError(str(waited_too_long)) from waited_too_long
        try:
            super()._start_transaction_under_autocommit()  # type: ignore[misc]  # private: not in the stubs
        except BaseException:
            self._writer_turn_give_back()
            raise

    def _commit(self) -> None:
        try:
            super()._commit()  # type: ignore[misc]  # private: not in the stubs
        finally:
            self._writer_turn_give_back()

    def _rollback(self) -> None:
        try:
            super()._rollback()  # type: ignore[misc]  # private: not in the stubs
        finally:
            self._writer_turn_give_back()

    def _close(self) -> None:
        try:
            super()._close()  # type: ignore[misc]  # private: not in the stubs
        finally:
            self._writer_turn_give_back(closed=True)

    def _writer_turn_give_back(self, *, closed: bool = False) -> None:
        # A COMMIT that failed leaves the transaction open, and SQLite's lock with it: the turn goes
        # back with the ROLLBACK that follows.
        if self._writer_turn is None:
            return
        if not closed and self.connection is not None and self.connection.in_transaction:
            return
        turn, self._writer_turn = self._writer_turn, None
        sqlite_writer_turn_release(self.settings_dict["NAME"], turn)
