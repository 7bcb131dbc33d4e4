from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from persona.services import persona_ensure, persona_mentions_record, suppressions_refresh
from reflections.models import Reflection
from tests.persona.factories import make_entry
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db


def test_the_third_mention_within_five_hours_suppresses(character):
    entry = make_entry(character=character, text="主人养了一只叫团子的猫")
    start = timezone.now()
    for hour in (0, 1):
        assert (
            persona_mentions_record(
                character_id=character.pk, reply="团子今天乖吗？", now=start + timedelta(hours=hour)
            )
            == 0
        )
    entry.refresh_from_db()
    assert len(entry.recent_mentions) == 2 and not entry.suppress
    assert (
        persona_mentions_record(
            character_id=character.pk, reply="要不要给团子买罐头", now=start + timedelta(hours=2)
        )
        == 1
    )
    entry.refresh_from_db()
    assert entry.suppress and entry.suppressed_at == start + timedelta(hours=2)


def test_mentions_older_than_five_hours_do_not_count(character):
    entry = make_entry(character=character, text="主人养了一只叫团子的猫")
    start = timezone.now()
    for hour in (0, 3, 6):
        persona_mentions_record(character_id=character.pk, reply="团子呢", now=start + timedelta(hours=hour))
    entry.refresh_from_db()
    assert not entry.suppress and len(entry.recent_mentions) == 2


def test_pending_reflections_and_card_entries_are_never_suppressed(character):
    persona_ensure(character_id=character.pk)
    pending = make_reflection(character=character, text="主人喜欢团子")
    confirmed = make_reflection(character=character, text="主人很宠团子", status="confirmed")
    now = timezone.now()
    for minute in range(4):
        persona_mentions_record(
            character_id=character.pk, reply="阿凛很宠团子，大学生温柔", now=now + timedelta(minutes=minute)
        )
    pending.refresh_from_db()
    confirmed.refresh_from_db()
    assert not pending.suppress and pending.recent_mentions == []
    assert confirmed.suppress
    assert not character.persona_entries.filter(protected=True, suppress=True).exists()


def test_a_suppression_lifts_after_five_hours(character):
    at = timezone.now() - timedelta(hours=5, minutes=1)
    entry = make_entry(
        character=character, text="主人在学吉他", suppress=True, suppressed_at=at, recent_mentions=["x"]
    )
    reflection = make_reflection(
        character=character,
        text="主人在学吉他",
        status=Reflection.Status.CONFIRMED,
        suppress=True,
        suppressed_at=at,
    )
    assert suppressions_refresh(character_id=character.pk) == 2
    entry.refresh_from_db()
    reflection.refresh_from_db()
    assert not entry.suppress and entry.recent_mentions == [] and not reflection.suppress


def test_the_post_turn_op_counts_the_ai_reply(character, post_history, django_capture_on_commit_callbacks):
    entry = make_entry(character=character, text="主人养了一只叫团子的猫")
    for _ in range(3):
        with django_capture_on_commit_callbacks(execute=True):
            post_history("cache", character.name, ("human", "今天好累"), ("ai", "团子在等你回家哦"))
    entry.refresh_from_db()
    assert entry.suppress


def test_an_entry_added_through_the_service_is_counted_on_the_next_reply(character):
    """The keywords are kept per memory version: a reply before the entry existed must not hide it."""
    from persona.services import persona_entry_create

    now = timezone.now()
    assert persona_mentions_record(character_id=character.pk, reply="团子今天乖吗？", now=now) == 0
    persona_entry_create(character_id=character.pk, entity="master", text="主人养了一只叫团子的猫")
    persona_mentions_record(character_id=character.pk, reply="团子今天乖吗？", now=now + timedelta(minutes=1))
    entry = character.persona_entries.get(text="主人养了一只叫团子的猫")
    assert len(entry.recent_mentions) == 1
