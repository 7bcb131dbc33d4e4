"""A save of a character read earlier keeps the counters services bumped meanwhile."""

from __future__ import annotations

import pytest
from django.db.models import F

from nekomem.characters.models import Character

pytestmark = pytest.mark.django_db


def test_saving_an_instance_read_before_a_turn_keeps_the_turns_counts() -> None:
    Character.objects.create(name="Mel")
    edited = Character.objects.get(name="Mel")  # a form or an API update reads it ...
    Character.objects.filter(name="Mel").update(  # ... a turn and a memory change land ...
        raw_rows_written=F("raw_rows_written") + 2, memory_version=F("memory_version") + 1
    )
    edited.master_name = "阿凛"
    edited.save()  # ... and the edit is saved
    stored = Character.objects.get(name="Mel")
    assert (stored.master_name, stored.raw_rows_written, stored.memory_version) == ("阿凛", 2, 1)


def test_a_new_character_is_saved_whole() -> None:
    character = Character(name="Kai", raw_rows_written=0, memory_version=0)
    character.save()
    assert Character.objects.get(name="Kai").pk == character.pk
