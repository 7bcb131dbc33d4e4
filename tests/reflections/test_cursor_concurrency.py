"""The rebuttal tick makes the character's ``ReflectionCursor`` on first use, while an import may be
writing the same row under the character lock. On PostgreSQL the tick's insert used to wait at its
COMMIT for the import's character lock (the deferred foreign-key check) while the import's insert of
the same cursor waited for the tick: "deadlock detected". These tests commit for real."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from nekomem.characters.models import Character
from reflections.models import ReflectionCursor
from reflections.portability import REBUTTAL_CURSOR, write_cursors
from reflections.services import reflections_rebuttal_tick
from tests.characters.factories import CharacterFactory
from tests.support.concurrency import create_while_locked, postgresql_only

pytestmark = [pytest.mark.django_db(transaction=True), postgresql_only]

T0 = timezone.make_aware(datetime(2024, 5, 1, 12, 0, 0))


def test_a_tick_meeting_an_import_of_the_cursor_does_not_deadlock(llm_server):
    character = CharacterFactory.create(name="小天")
    imported = T0 - timedelta(days=2)

    raced = create_while_locked(
        character_id=character.pk,
        create=lambda: reflections_rebuttal_tick(character_id=character.pk, now=T0),
        then=lambda: write_cursors(Character.objects.get(pk=character.pk), {REBUTTAL_CURSOR: imported}),
    )

    assert raced.creator_waited
    assert raced.errors == []
    assert ReflectionCursor.objects.filter(character=character).count() == 1
    # The import ran first and made the row; the tick found it rather than making its own.
    assert raced.held is not None and not isinstance(raced.held, BaseException)
    assert raced.held.created == 1


def test_a_tick_with_the_cursor_present_takes_no_lock(llm_server):
    character = CharacterFactory.create(name="小天")
    ReflectionCursor.objects.create(character=character, rebuttal_checked_until=T0 - timedelta(hours=1))

    # The holder writes nothing; a tick that waited for it would be seen waiting.
    raced = create_while_locked(
        character_id=character.pk,
        create=lambda: reflections_rebuttal_tick(character_id=character.pk, now=T0),
        then=lambda: None,
        timeout=1,
    )

    assert raced.errors == []
    assert not raced.creator_waited
