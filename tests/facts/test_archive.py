from __future__ import annotations

from datetime import timedelta

import pytest

from facts.models import Fact
from facts.services import facts_archive_sweep
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
