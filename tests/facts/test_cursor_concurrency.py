"""The extraction cursor is created by whichever loop reaches a new character first, from several
workers at once (the archive sweep under the character lock, the extraction tick outside it): on
PostgreSQL an INSERT made outside the lock used to wait for the lock's holder while that holder's own
INSERT of the same row waited for it, and PostgreSQL broke the cycle with "deadlock detected".
These tests commit for real (other threads, other connections)."""

from __future__ import annotations

import logging

import pytest

from facts.models import ExtractionCursor
from facts.services import facts_archive_sweep, facts_extraction_tick
from facts.tasks import facts_archive_loop, facts_extraction_loop
from tests.characters.factories import CharacterFactory
from tests.facts.conftest import T0
from tests.support.concurrency import create_while_locked, on_own_connection, postgresql_only

pytestmark = pytest.mark.django_db(transaction=True)


@postgresql_only
def test_a_tick_arriving_while_the_sweep_holds_the_character_lock_does_not_deadlock(llm_server):
    character = CharacterFactory.create(name="小天")

    # The sweep's own transaction, stopped right after its lock_character until the tick waits on
    # the character: the interleaving two cluster workers hit at server start.
    raced = create_while_locked(
        character_id=character.pk,
        create=lambda: facts_extraction_tick(character_id=character.pk, now=T0),
        then=lambda: facts_archive_sweep(character_id=character.pk, now=T0),
    )

    assert raced.creator_waited
    assert raced.errors == []
    assert ExtractionCursor.objects.filter(character=character).count() == 1


def test_loops_racing_over_new_characters_create_each_cursor_once(llm_server):
    characters = CharacterFactory.create_batch(40)
    logged: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            logged.append(record.getMessage() + (f" {record.exc_info[1]}" if record.exc_info else ""))

    handler = Collect(level=logging.ERROR)
    logging.getLogger("facts.tasks").addHandler(handler)
    try:
        workers = [
            on_own_connection(loop)
            for loop in (facts_extraction_loop, facts_archive_loop, facts_extraction_loop, facts_archive_loop)
        ]
        errors = [error for worker in workers if isinstance(error := worker.outcome(), BaseException)]
    finally:
        logging.getLogger("facts.tasks").removeHandler(handler)

    assert errors == [] and logged == []
    assert ExtractionCursor.objects.filter(character__in=characters).count() == len(characters)
