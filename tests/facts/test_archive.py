from __future__ import annotations

from datetime import timedelta

import pytest

from facts.models import Fact
from facts.services import fact_archive, fact_restore, facts_archive_sweep
from nekomem.characters.models import Character
from nekomem.journal.events import VERSION_EVENT
from nekomem.journal.models import Event
from nekomem.journal.services import events_reconcile
from tests.facts.conftest import T0
from tests.facts.factories import FactFactory

pytestmark = pytest.mark.django_db


def test_only_absorbed_facts_older_than_seven_days_are_archived_once_a_day(character):
    old_absorbed = FactFactory.create(character=character, absorbed=True, created_at=T0 - timedelta(days=8))
    young_absorbed = FactFactory.create(character=character, absorbed=True, created_at=T0 - timedelta(days=6))
    old_free = FactFactory.create(character=character, absorbed=False, created_at=T0 - timedelta(days=30))

    assert facts_archive_sweep(character_id=character.pk, now=T0) == 1
    archived = set(Fact.objects.filter(archived=True).values_list("pk", flat=True))
    assert archived == {old_absorbed.pk}
    assert young_absorbed.pk not in archived and old_free.pk not in archived

    # Throttled: two days later the young one qualifies, but not until 24 h after the last attempt.
    assert facts_archive_sweep(character_id=character.pk, now=T0 + timedelta(hours=23)) == 0
    assert facts_archive_sweep(character_id=character.pk, now=T0 + timedelta(hours=25)) == 1
    # Archived rows keep their shape and stay one row each.
    assert Fact.objects.filter(character=character).count() == 3


def memory_version(character_id: int) -> int:
    return Character.objects.values_list("memory_version", flat=True).get(pk=character_id)


def test_one_fact_is_archived_by_hand_whatever_its_age_with_the_sweeps_event(character):
    fact = FactFactory.create(character=character, absorbed=False, created_at=T0)
    other = FactFactory.create(character=character)
    before = memory_version(character.pk)

    fact_archive(character_id=character.pk, fact_id=fact.fact_id, now=T0 + timedelta(hours=1))

    fact.refresh_from_db()
    assert fact.archived and fact.archived_at == T0 + timedelta(hours=1)
    assert not Fact.objects.get(pk=other.pk).archived
    event = Event.objects.filter(character=character).exclude(type=VERSION_EVENT).latest("seq")
    assert (event.type, event.payload["fact_ids"]) == ("fact.archived", [fact.fact_id])
    assert memory_version(character.pk) == before + 1  # recall caches drop the fact's old state
    # Archiving it again changes nothing and logs nothing.
    fact_archive(character_id=character.pk, fact_id=fact.fact_id)
    assert Event.objects.filter(character=character).exclude(type=VERSION_EVENT).count() == 1
    assert Fact.objects.get(pk=fact.pk).archived_at == T0 + timedelta(hours=1)


def test_a_restored_fact_is_active_again_and_a_replay_does_not_archive_it_back(character):
    fact = FactFactory.create(character=character, created_at=T0)
    fact_archive(character_id=character.pk, fact_id=fact.fact_id)
    before = memory_version(character.pk)

    fact_restore(character_id=character.pk, fact_id=fact.fact_id)

    fact.refresh_from_db()
    assert not fact.archived and fact.archived_at is None
    assert memory_version(character.pk) == before + 1
    assert events_reconcile(character_id=character.pk).applied == 0
    assert not Fact.objects.get(pk=fact.pk).archived


def test_archive_and_restore_refuse_a_fact_of_another_character(character):
    stranger = FactFactory.create(text="别的角色的事实")
    for act in (fact_archive, fact_restore):
        with pytest.raises(Fact.DoesNotExist):
            act(character_id=character.pk, fact_id=stranger.fact_id)
    assert not Fact.objects.get(pk=stranger.pk).archived
