"""Deleting a reflection (REST and memory browser): the row, its surfaced record and its text in the
journal go; the answer says how many; another character's reflection is untouched."""

from __future__ import annotations

import pytest
from django.utils import timezone

from nekomem.journal.models import Event
from nekomem.journal.services import event_append
from reflections.models import Reflection, SurfacedReflection
from reflections.services.records import reflection_to_file_dict
from tests.characters.factories import CharacterFactory
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db

TEXT = "主人似乎总在周五晚上加班"


@pytest.fixture
def reflection() -> Reflection:
    character = CharacterFactory.create(name="小天")
    made = make_reflection(character=character, text=TEXT, status="confirmed")
    event_append(
        character_id=character.pk, event_type="reflection.synthesized", payload=reflection_to_file_dict(made)
    )
    SurfacedReflection.objects.create(
        character=character, reflection_id=made.reflection_id, text=TEXT, surfaced_at=timezone.now()
    )
    other = CharacterFactory.create(name="小地")
    make_reflection(character=other, text=TEXT, status="confirmed", reflection_id=made.reflection_id)
    return made


def test_rest_delete_removes_every_copy_and_counts_them(client, reflection) -> None:
    url = f"/api/v1/characters/小天/reflections/{reflection.reflection_id}/"
    answer = client.delete(url)
    assert answer.status_code == 200, answer.content
    removed = answer.json()["removed"]
    assert removed == {"reflections": 1, "vectors": 0, "surfaced": 1, "journal_texts": 1}
    assert not Reflection.objects.filter(character=reflection.character).exists()
    assert not SurfacedReflection.objects.exists()
    assert not [e for e in Event.objects.all() if TEXT in str(e.payload)]
    assert Event.objects.filter(type="reflection.synthesized").count() == 1  # kept for replay, blanked
    assert Reflection.objects.filter(character__name="小地", text=TEXT).count() == 1
    assert client.delete(url).status_code == 404


def test_the_browser_deletes_and_says_what_went(client, reflection) -> None:
    page = client.get("/browse/小天/reflections/")
    assert 'data-testid="reflection-delete"' in page.content.decode()
    done = client.post(f"/browse/小天/reflections/{reflection.reflection_id}/delete/", follow=True)
    assert done.status_code == 200
    body = done.content.decode()
    assert "reflections 1" in body and "surfaced 1" in body
    assert not Reflection.objects.filter(character=reflection.character).exists()
