"""Character rename (every layer follows the name) and delete (every row goes, the caches with it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

from facts.models import Fact
from nekomem.characters.models import Character
from nekomem.characters.names import InvalidCharacterName
from nekomem.characters.selectors import character_footprint
from nekomem.characters.services import (
    CharacterNameTaken,
    CharacterNotFound,
    character_delete,
    character_id_for,
    character_release,
    character_rename,
)
from nekomem.journal.jobs import job_create
from nekomem.journal.models import Job
from recall.snapshots import snapshot_path
from recent.jobs import REVIEW_JOB
from tests.characters.factories import CharacterFactory
from tests.portability.layout import FIXTURE, NAME, database_snapshot

pytestmark = pytest.mark.django_db
RECENT_TEXT = "对了，下周三是我妈妈生日，提醒我订蛋糕。"


@pytest.fixture
def imported() -> Character:
    call_command("import_memory", str(FIXTURE), verbosity=0)
    return Character.objects.get(name=NAME)


def saved_index(character: Character) -> Path:
    """A recall index saved on disk for the character (as a worker leaves one)."""
    path = snapshot_path(
        character_id=character.pk,
        incarnation=character.created_at.isoformat(),
        model_id=None,
        stop_names=tuple(character.stop_names),
    )
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"saved index")
    return path


def test_rename_moves_every_layer_and_new_dialog_follows(
    client, imported, django_capture_on_commit_callbacks
):
    footprint = character_footprint(character_id=imported.pk)
    version = imported.memory_version
    with django_capture_on_commit_callbacks(execute=True):
        renamed = character_rename(name=NAME, new_name="Mochi 喵")
    assert renamed.pk == imported.pk and renamed.name == "Mochi 喵"
    assert character_footprint(character_id=renamed.pk) == footprint
    assert renamed.memory_version > version  # renders print the name: their caches start over
    assert not Character.objects.filter(name=NAME).exists()

    context = client.get("/new_dialog/Mochi 喵").content.decode()
    assert RECENT_TEXT in context
    assert client.get(f"/new_dialog/{NAME}").content.decode() == ""


def test_rename_drops_what_was_kept_by_the_old_name(client, imported, django_capture_on_commit_callbacks):
    assert character_id_for(name=NAME, cached=True) == imported.pk
    index = saved_index(imported)
    with django_capture_on_commit_callbacks(execute=True):
        character_rename(name=NAME, new_name="Mochi")
    assert not index.exists()  # built with the old name among its stop names
    # The chat server still using the old name starts a new character; the renamed one is untouched.
    before = Fact.objects.filter(character=imported).count()
    response = client.post(
        f"/cache/{NAME}",
        data={"input_history": '[{"type": "human", "data": {"content": "你好"}}]'},
        content_type="application/json",
    )
    assert response.json()["status"] == "cached"
    newcomer = Character.objects.get(name=NAME)
    assert newcomer.pk != imported.pk
    assert Fact.objects.filter(character=imported).count() == before


def test_rename_onto_an_existing_name_changes_nothing(imported):
    CharacterFactory.create(name="Mochi")
    before = database_snapshot()
    with pytest.raises(CharacterNameTaken):
        character_rename(name=NAME, new_name="Mochi")
    assert database_snapshot() == before


@pytest.mark.parametrize("bad", ["", " 小天", "a/b", "x" * 65, "."])
def test_rename_to_an_invalid_name_changes_nothing(imported, bad):
    before = database_snapshot()
    with pytest.raises(InvalidCharacterName):
        character_rename(name=NAME, new_name=bad)
    assert database_snapshot() == before


def test_rename_of_an_unknown_character_and_to_the_same_name():
    with pytest.raises(CharacterNotFound):
        character_rename(name="无名氏", new_name="Mochi")
    character = CharacterFactory.create(name="小天")
    assert character_rename(name="小天", new_name="小天").memory_version == character.memory_version


def test_delete_removes_every_row_and_reports_them(imported, django_capture_on_commit_callbacks):
    other = CharacterFactory.create(name="旁观者")
    expected = character_footprint(character_id=imported.pk)
    index = saved_index(imported)
    character_id_for(name=NAME, cached=True)
    with django_capture_on_commit_callbacks(execute=True):
        footprint = character_delete(name=NAME)
    assert footprint == expected
    layers = footprint.as_dict()
    assert layers["facts"]["fact"] == 11 and layers["recent"]["raw message (time-indexed log)"] == 8
    assert {"recent", "facts", "reflections", "persona", "journal"} <= set(layers)
    assert list(Character.objects.values_list("name", flat=True)) == [other.name]
    after = database_snapshot()
    for table, rows in after.items():
        if table != "characters.Character":
            assert all(row.get("character_id") != imported.pk for row in rows), table
    assert not index.exists()
    assert character_id_for(name=NAME) != imported.pk  # the cached id is gone: a new character


def test_delete_of_an_unknown_character():
    with pytest.raises(CharacterNotFound):
        character_delete(name="无名氏")


def test_release_cancels_the_derived_jobs(imported):
    job, _ = job_create(character_id=imported.pk, kind=REVIEW_JOB, enqueue=False)
    released = character_release(name=NAME)
    assert released.character_found and released.cancelled_jobs == 1
    job.refresh_from_db()
    assert job.status == "done" and job.outcome == "cancelled"
    assert character_release(name=NAME).cancelled_jobs == 0
    assert character_release(name="无名氏").character_found is False
    assert Job.objects.count() == 1
