from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from reflections.models import ArchiveShard, Reflection
from reflections.services import reflections_archive_sweep
from reflections.services.archive import SHARD_CAPACITY, shard_take
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db


def negative(character, **fields):
    return make_reflection(character=character, disputation=1.0, disp_last_signal_at=timezone.now(), **fields)


def test_sub_zero_days_count_once_per_calendar_day_and_archive_at_fourteen(character):
    reflection = negative(character)
    day = timezone.now()
    reflections_archive_sweep(character_id=character.pk, now=day)
    reflections_archive_sweep(character_id=character.pk, now=day + timedelta(minutes=1))
    reflection.refresh_from_db()
    assert reflection.sub_zero_days == 1

    for n in range(1, 13):
        reflections_archive_sweep(character_id=character.pk, now=day + timedelta(days=n))
    reflection.refresh_from_db()
    assert reflection.sub_zero_days == 13 and reflection.status == Reflection.Status.PENDING

    reflections_archive_sweep(character_id=character.pk, now=day + timedelta(days=13))
    reflection.refresh_from_db()
    assert reflection.status == Reflection.Status.ARCHIVED and reflection.archived_at is not None
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}_[0-9a-f]{8}\.json", reflection.archive_shard_path or "")


def test_a_non_negative_score_does_not_count(character):
    reflection = make_reflection(character=character, reinforcement=0.2, rein_last_signal_at=timezone.now())
    reflections_archive_sweep(character_id=character.pk)
    reflection.refresh_from_db()
    assert reflection.sub_zero_days == 0


def test_promoted_and_denied_older_than_thirty_days_move_to_shards_keeping_their_status(character):
    now = timezone.now()
    old = make_reflection(
        character=character, status=Reflection.Status.DENIED, denied_at=now - timedelta(days=31)
    )
    recent = make_reflection(
        character=character, status=Reflection.Status.PROMOTED, promoted_at=now - timedelta(days=29)
    )
    reflections_archive_sweep(character_id=character.pk, now=now)
    old.refresh_from_db()
    recent.refresh_from_db()
    assert old.status == Reflection.Status.DENIED and old.archive_shard_path
    assert recent.archive_shard_path is None


def test_a_full_shard_is_followed_by_a_new_one(character):
    now = timezone.now()
    names = [shard_take(character_id=character.pk, now=now) for _ in range(SHARD_CAPACITY + 1)]
    assert len(set(names[:SHARD_CAPACITY])) == 1 and names[-1] != names[0]
    assert sorted(ArchiveShard.objects.values_list("size", flat=True)) == [1, SHARD_CAPACITY]
