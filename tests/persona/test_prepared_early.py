"""A new character's persona is prepared after its first turn, in the background, not by the first
``/new_dialog`` on the chat path."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from nekomem.characters.models import Character
from persona.models import PersonaSection, PersonaState
from persona.services import persona_prepared_early

pytestmark = pytest.mark.django_db

WRITES = ("INSERT", "UPDATE", "DELETE")


@pytest.mark.parametrize(
    ("name", "said", "reply"),
    [("新角色", "今天下雨了", "记得带伞哦"), ("Nova", "It rained today", "Take an umbrella!")],
)
def test_the_first_turn_prepares_the_persona_so_the_first_new_dialog_writes_nothing(
    client, post_history, django_capture_on_commit_callbacks, name, said, reply
):
    with django_capture_on_commit_callbacks(execute=True):
        post_history("cache", name, ("human", said), ("ai", reply))
    character = Character.objects.get(name=name)
    assert PersonaState.objects.filter(character=character).exists()
    assert PersonaSection.objects.filter(character=character).exists()

    with CaptureQueriesContext(connection) as statements:
        response = client.get(f"/new_dialog/{name}")
    assert response.status_code == 200 and said in response.content.decode()
    written = [q["sql"] for q in statements.captured_queries if q["sql"].lstrip().upper().startswith(WRITES)]
    assert written == []


def test_a_prepared_persona_is_left_alone(client, post_history):
    post_history("cache", "小天", ("human", "早"), ("ai", "早上好"))  # its op not run: nothing prepared
    character_id = Character.objects.get(name="小天").pk
    assert not PersonaState.objects.filter(character_id=character_id).exists()
    assert persona_prepared_early(character_id=character_id) is True
    sections = PersonaSection.objects.filter(character_id=character_id).count()
    assert sections > 0
    assert persona_prepared_early(character_id=character_id) is False
    assert PersonaSection.objects.filter(character_id=character_id).count() == sections
