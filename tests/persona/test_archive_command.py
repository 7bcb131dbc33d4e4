"""``manage.py archive``: the archive sweep of reflections and persona entries, run by hand."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from nekomem.runtime.startup import storage_release
from nekomem.runtime.state import storage_block
from persona.services import persona_ensure
from reflections.models import Reflection
from tests.characters.factories import CharacterFactory
from tests.persona.factories import make_entry
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db


def doubted(character, text: str):
    """An entry below zero that counted 13 sub-zero days up to yesterday: today's sweep archives it."""
    now = timezone.now()
    yesterday = timezone.localtime(now).date() - timedelta(days=1)
    return make_entry(
        character=character,
        text=text,
        disputation=1.0,
        disp_last_signal_at=now,
        sub_zero_days=13,
        sub_zero_last_increment_date=yesterday,
    )


def test_archive_sweeps_one_character_and_leaves_the_others(character):
    persona_ensure(character_id=character.pk)
    entry = doubted(character, "主人讨厌下雨")
    old = make_reflection(
        character=character,
        status=Reflection.Status.DENIED,
        denied_at=timezone.now() - timedelta(days=31),
    )
    other = CharacterFactory.create(name="小满")
    untouched = doubted(other, "主人讨厌打雷")
    out = StringIO()
    call_command("archive", "--character", character.name, stdout=out)
    entry.refresh_from_db()
    old.refresh_from_db()
    untouched.refresh_from_db()
    assert entry.archive_shard_path and entry.sub_zero_days == 14
    assert old.archive_shard_path
    assert untouched.archive_shard_path is None and untouched.sub_zero_days == 13
    assert "小天: 1 reflections, 1 persona entries archived" in out.getvalue()
    assert "1 characters swept" in out.getvalue()


def test_archive_without_a_name_sweeps_every_character(character):
    first = doubted(character, "主人讨厌下雨")
    second = doubted(CharacterFactory.create(name="小满"), "主人讨厌打雷")
    call_command("archive", stdout=StringIO())
    for entry in (first, second):
        entry.refresh_from_db()
        assert entry.archive_shard_path


def test_an_unknown_character_is_an_error_with_a_non_zero_exit():
    with pytest.raises(CommandError, match="no character named 'nobody'") as excinfo:
        call_command("archive", "--character", "nobody")
    assert excinfo.value.returncode == 1


def test_a_blocked_storage_sweeps_nothing(character):
    entry = doubted(character, "主人讨厌下雨")
    storage_block(reason="backup")
    try:
        with pytest.raises(CommandError, match="storage is blocked"):
            call_command("archive", stdout=StringIO())
    finally:
        storage_release()
    entry.refresh_from_db()
    assert entry.archive_shard_path is None and entry.sub_zero_days == 13
