"""A reflection's text edited by hand: the text changes, nothing else does, and replay rebuilds it."""

from __future__ import annotations

import pytest
from django.test import Client

from nekomem.journal.events import VERSION_EVENT
from nekomem.journal.models import AppliedSentinel, Event
from nekomem.journal.services import events_reconcile
from reflections.models import Reflection
from reflections.services import reflection_edit
from tests.reflections.factories import make_reflection

pytestmark = pytest.mark.django_db

API = "/api/v1/characters/小天/reflections/"


def test_the_text_changes_and_status_evidence_and_ontology_stay(character) -> None:
    reflection = make_reflection(
        character=character,
        status=Reflection.Status.CONFIRMED,
        reinforcement=1.5,
        relation_type="preference",
        temporal_scope="pattern",
    )
    edited = reflection_edit(
        character_id=character.pk, reflection_id=reflection.reflection_id, text=" 主人喜欢在雨天读书 "
    )
    edited.refresh_from_db()
    assert edited.text == "主人喜欢在雨天读书"
    assert (edited.status, edited.reinforcement, edited.relation_type, edited.temporal_scope) == (
        "confirmed",
        1.5,
        "preference",
        "pattern",
    )
    event = Event.objects.filter(character=character).exclude(type=VERSION_EVENT).latest("seq")
    assert event.type == "reflection.state_changed"
    assert event.payload["from"] == event.payload["to"] == "confirmed"
    assert event.payload["text"] == "主人喜欢在雨天读书" and event.payload["reason"] == "manual_edit"


def test_a_text_over_150_tokens_clears_the_ontology(character) -> None:
    reflection = make_reflection(character=character, relation_type="habit", temporal_scope="pattern")
    long_text = "主人每天早上都会去公园跑步然后回家吃早饭" * 20
    reflection_edit(character_id=character.pk, reflection_id=reflection.reflection_id, text=long_text)
    reflection.refresh_from_db()
    assert reflection.text == long_text
    assert (reflection.relation_type, reflection.temporal_scope, reflection.subject) == (None, None, None)


def test_the_same_text_writes_nothing_and_bad_text_is_refused(character) -> None:
    reflection = make_reflection(character=character, text="主人喜欢猫")
    events = Event.objects.count()
    reflection_edit(character_id=character.pk, reflection_id=reflection.reflection_id, text="主人喜欢猫 ")
    assert Event.objects.count() == events
    for bad in ("  ", "长" * 4001):
        with pytest.raises(ValueError):
            reflection_edit(character_id=character.pk, reflection_id=reflection.reflection_id, text=bad)
    with pytest.raises(Reflection.DoesNotExist):
        reflection_edit(character_id=character.pk, reflection_id="ref_0000000000000000", text="x")
    reflection.refresh_from_db()
    assert reflection.text == "主人喜欢猫" and Event.objects.count() == events


def test_replay_of_the_event_restores_a_lost_edit(character) -> None:
    reflection = make_reflection(character=character, text="主人喜欢猫", relation_type="preference")
    reflection_edit(character_id=character.pk, reflection_id=reflection.reflection_id, text="主人喜欢狗")
    event = Event.objects.filter(character=character).exclude(type=VERSION_EVENT).latest("seq")
    Reflection.objects.filter(pk=reflection.pk).update(text="主人喜欢猫")
    AppliedSentinel.objects.filter(character=character).update(last_applied_seq=event.seq - 1)
    assert events_reconcile(character_id=character.pk).applied == 1
    reflection.refresh_from_db()
    assert reflection.text == "主人喜欢狗" and reflection.relation_type == "preference"


def test_the_rest_edit(client: Client, character) -> None:
    reflection = make_reflection(character=character)
    url = f"{API}{reflection.reflection_id}/"
    answer = client.patch(url, {"text": "主人喜欢晴天"}, content_type="application/json")
    assert answer.status_code == 200 and answer.json()["text"] == "主人喜欢晴天"
    assert client.patch(url, {"text": ""}, content_type="application/json").status_code == 400
    missing = client.patch(f"{API}ref_0000000000000000/", {"text": "x"}, content_type="application/json")
    assert missing.status_code == 404
    reflection.refresh_from_db()
    assert reflection.text == "主人喜欢晴天"
