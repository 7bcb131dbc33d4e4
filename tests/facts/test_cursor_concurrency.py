"""The extraction cursor is created by whichever loop reaches a new character first, from several
workers at once (the archive sweep under the character lock, the extraction tick outside it): on
PostgreSQL an INSERT made outside the lock used to wait for the lock's holder while that holder's own
INSERT of the same row waited for it, and PostgreSQL broke the cycle with "deadlock detected".
These tests commit for real (other threads, other connections)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection, transaction

from facts.models import ExtractionCursor
from facts.services import facts_archive_sweep, facts_extraction_tick
from facts.tasks import facts_archive_loop, facts_extraction_loop
from nekomem.characters.locks import lock_character
from tests.characters.factories import CharacterFactory
from tests.facts.conftest import T0

pytestmark = pytest.mark.django_db(transaction=True)


def _own_connection(work: Callable[[], Any], errors: list[BaseException]) -> Callable[[], None]:
    def run() -> None:
        try:
            work()
        except BaseException as exc:  # reported by the test thread, which alone can fail the test
            errors.append(exc)
        finally:
            connection.close()

    return run


def _waits_for_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks and FK key-share locks: PostgreSQL")
def test_a_tick_arriving_while_the_sweep_holds_the_character_lock_does_not_deadlock(llm_server):
    character = CharacterFactory.create(name="小天")
    errors: list[BaseException] = []
    tick_pid: list[int] = []

    def tick() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            tick_pid.append(cursor.fetchone()[0])
        facts_extraction_tick(character_id=character.pk, now=T0)

    ticker = threading.Thread(target=_own_connection(tick, errors))
    sweep_errors: list[BaseException] = []

    def sweep() -> None:
        # The sweep's own transaction, stopped right after its lock_character until the tick waits
        # on the character: the interleaving two cluster workers hit at server start.
        with transaction.atomic():
            lock_character(character.pk)
            ticker.start()
            deadline = time.monotonic() + 10
            while not (tick_pid and _waits_for_a_lock(tick_pid[0])) and time.monotonic() < deadline:
                time.sleep(0.01)
            facts_archive_sweep(character_id=character.pk, now=T0)

    sweeper = threading.Thread(target=_own_connection(sweep, sweep_errors))
    sweeper.start()
    sweeper.join(timeout=30)
    ticker.join(timeout=30)

    assert [*sweep_errors, *errors] == []
    assert ExtractionCursor.objects.filter(character=character).count() == 1


def test_loops_racing_over_new_characters_create_each_cursor_once(llm_server):
    characters = CharacterFactory.create_batch(40)
    errors: list[BaseException] = []
    logged: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            logged.append(record.getMessage() + (f" {record.exc_info[1]}" if record.exc_info else ""))

    handler = Collect(level=logging.ERROR)
    logging.getLogger("facts.tasks").addHandler(handler)
    try:
        workers = [
            threading.Thread(target=_own_connection(loop, errors))
            for loop in (facts_extraction_loop, facts_archive_loop, facts_extraction_loop, facts_archive_loop)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=60)
    finally:
        logging.getLogger("facts.tasks").removeHandler(handler)

    assert errors == [] and logged == []
    assert ExtractionCursor.objects.filter(character__in=characters).count() == len(characters)
