from __future__ import annotations

from datetime import datetime, timedelta
from typing import cast

import pytest
from django.utils import timezone

from nekomem.characters.models import Character
from recent.services import raw_log_append
from tests.characters.factories import CharacterFactory

T0 = timezone.make_aware(datetime(2024, 5, 1, 12, 0, 0))


@pytest.fixture
def character() -> Character:
    return cast(Character, CharacterFactory.create(name="小天", master_name="阿凛"))


def say(character: Character, at: datetime, *pairs: tuple[str, str]) -> None:
    """One /cache call's worth of raw-log rows at ``at`` (what the raw log holds after a turn)."""
    raw_log_append(
        character_id=character.pk,
        messages=[{"type": kind, "data": {"content": text}} for kind, text in pairs],
        timestamp=at,
    )
    Character.objects.filter(pk=character.pk).update(last_activity_at=at)


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)
