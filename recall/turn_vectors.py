"""New chat turns embedded, and the time they say read, as they arrive, by the worker that cached them.

The embedding backfill runs on a schedule (every minute, rounds a second apart while it has work): a
turn cached while it was idle had no vector for up to a minute, and a query by meaning ("cat" for a
turn about 猫) found nothing meanwhile. Here ``/cache``'s commit hands the character to one thread of
the worker (``nekomem.journal.registry.register_raw_turns_hook``), which embeds the character's new
turns in one batch with the model the worker already holds for queries, writes them like the backfill
(logged vector changes: every worker's index takes them), and brings this worker's index up to date
with them before it waits again. Turns that arrive while it embeds form the next batch. Best effort: a
character it did not reach (the worker stopped) is embedded by the backfill's schedule.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time

from django.conf import settings
from django.db import close_old_connections, connection

from nekomem.embeddings import embedder_within, get_embedder, vector_space
from nekomem.runtime.state import StorageBlocked, storage_writer
from recall import index_cache
from recall.backfill import raw_turns_embed
from recall.selectors import raw_turns_without_window
from recall.services import raw_turn_windows_write
from recall.services.raw_vectors import RawWindowRow
from recall.times import find_time_expression

logger = logging.getLogger(__name__)

TURNS_AT_ONCE = 256  # of one character per batch; a longer history (an import) is the backfill's
# How long a process that is exiting waits for the turns it was handed to be embedded.
EXIT_WAIT_SECONDS = 30.0


class _TurnEmbedder:
    def __init__(self) -> None:
        self._wake = threading.Condition(threading.Lock())
        self._waiting: dict[int, None] = {}  # characters with new turns, in arrival order
        self._busy = False
        self._thread: threading.Thread | None = None

    def arrived(self, character_id: int) -> None:
        with self._wake:
            self._waiting[character_id] = None
            if self._thread is None or not self._thread.is_alive():
                if self._thread is None:
                    # A process that exits while this thread is inside the model (loading it, or
                    # embedding) is aborted by the runtime's C++ teardown ("terminate called without an
                    # active exception"): a short-lived one, such as `manage.py shell` recording a turn,
                    # waits for its turns first.
                    atexit.register(self.idle, EXIT_WAIT_SECONDS)
                self._thread = threading.Thread(target=self._run, name="recall-turn-vectors", daemon=True)
                self._thread.start()
            self._wake.notify()

    def idle(self, timeout: float | None = None) -> bool:
        """Wait until every turn handed over so far is embedded (tests, a clean stop)."""
        with self._wake:
            return self._wake.wait_for(lambda: not self._waiting and not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._wake:
                if not self._wake.wait_for(
                    lambda: bool(self._waiting), settings.RECALL_VECTOR_FILLER_IDLE_SECONDS
                ):
                    connection.close()  # idle: the backend goes back until the next turn
                    self._wake.wait_for(lambda: bool(self._waiting))
                characters, self._waiting = list(self._waiting), {}
                self._busy = True
            try:
                close_old_connections()
                for character_id in characters:
                    _embed(character_id)
            finally:
                with self._wake:
                    self._busy = False
                    self._wake.notify_all()


def raw_turn_windows_read(*, character_id: int, limit: int = TURNS_AT_ONCE) -> int:
    """Read the time each new turn says with the time parser (every locale's expressions, against the
    turn's own timestamp) and store it; returns how many turns name one. No LLM: a time-windowed query
    finds "上周末去了泰山" in last weekend's window at once, and a fact extracted later takes over (the
    turn leaves the raw-turn pool when extraction covers it)."""
    rows: list[RawWindowRow] = []
    for pk, text, timestamp in raw_turns_without_window(character_id=character_id, limit=limit):
        found = find_time_expression(text, now=timestamp, tz=settings.TIME_ZONE)
        rows.append((pk, found.window.start, found.window.end) if found else (pk, None, None))
    raw_turn_windows_write(character_id=character_id, rows=rows)
    return sum(1 for _, start, _ in rows if start is not None)


def _embed(character_id: int) -> None:
    started = time.monotonic()
    # Background work like every task: nothing written while storage is blocked (the backfill's
    # schedule embeds these turns once it is lifted); a block that arrives stops it at its next write.
    with storage_writer() as allowed:
        if allowed:
            _embed_now(character_id, started)


def _embed_now(character_id: int, started: float) -> None:
    try:
        dated = raw_turn_windows_read(character_id=character_id)
        embedder = embedder_within(0.0)  # starts the load if nothing has yet
        if embedder is None and vector_space() is not None:
            # The worker is still loading the model (its first seconds after a start): the windows read
            # so far are findable now, not once the model is in.
            if dated:
                index_cache.recall_index_refresh(character_id=character_id)
                dated = 0
            embedder = get_embedder()
        embedded = 0
        if embedder is not None:
            embedded, _ = raw_turns_embed(
                character_id=character_id, embedder=embedder, limit=TURNS_AT_ONCE, idle=False
            )
        if embedded or dated:
            index_cache.recall_index_refresh(character_id=character_id)
        logger.info(
            "turn vectors character=%s embedded=%d dated=%d ms=%.1f",
            character_id,
            embedded,
            dated,
            (time.monotonic() - started) * 1000,
        )
    except StorageBlocked:
        logger.info("turn vectors stopped by a storage block character=%s", character_id)
    except Exception:
        logger.exception("turn vectors failed character=%s (the backfill embeds them)", character_id)
        connection.close()  # a broken connection is opened anew by the next batch


_embedder = _TurnEmbedder()


def turns_arrived(character_id: int) -> None:
    """The raw-turns hook: a chat turn of the character was committed to the raw log."""
    if settings.RECALL_EMBED_TURNS_ON_ARRIVAL:
        _embedder.arrived(character_id)


def turn_vectors_idle(timeout: float | None = None) -> bool:
    """Whether every turn handed over so far has been embedded, waiting at most ``timeout``."""
    return _embedder.idle(timeout)
