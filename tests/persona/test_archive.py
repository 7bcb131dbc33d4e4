from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from persona.models import PersonaArchiveShard
from persona.services import persona_archive_sweep, persona_ensure
from tests.persona.factories import make_entry

pytestmark = pytest.mark.django_db


def test_a_negative_entry_is_archived_on_its_fourteenth_sub_zero_day(character):
    persona_ensure(character_id=character.pk)
    start = timezone.now()
    doubted = make_entry(character=character, text="主人讨厌下雨", disputation=1.0, disp_last_signal_at=start)
    for day in range(14):
        persona_archive_sweep(character_id=character.pk, now=start + timedelta(days=day))
        persona_archive_sweep(character_id=character.pk, now=start + timedelta(days=day, hours=1))  # same day
    doubted.refresh_from_db()
    assert doubted.sub_zero_days == 14 and doubted.archive_shard_path
    assert PersonaArchiveShard.objects.get(character=character).size == 1
    cards = character.persona_entries.filter(protected=True)
    assert cards.exists() and not cards.filter(archive_shard_path__isnull=False).exists()
    assert not cards.exclude(sub_zero_days=0).exists()
