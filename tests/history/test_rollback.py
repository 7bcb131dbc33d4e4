"""A character as it was at a time: read-only ``as_of`` and rolling back (issue 49)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from facts.services import fact_update
from facts.services.archive import fact_archive
from history.services import memory_rollback
from nekomem.journal.causes import change_cause
from recent.models import RawMessage
from tests.history.support import fact_by_text, facts_added, facts_state, live_texts, moment

pytestmark = pytest.mark.django_db
API = "/api/v1/characters/小天"


def test_a_rollback_to_t_then_to_now_again_is_lossless(character):
    facts_added(character.pk, "阿凛喜欢猫", "阿凛怕打雷")
    then = facts_state(character.pk)
    at = moment()
    facts_added(character.pk, "阿凛在学日语")
    cat = fact_by_text(character.pk, "阿凛喜欢猫")
    with change_cause("refine"):
        fact_update(character_id=character.pk, fact_id=cat.fact_id, text="阿凛讨厌猫", importance=2)
    fact_archive(character_id=character.pk, fact_id=fact_by_text(character.pk, "阿凛怕打雷").fact_id)
    now = facts_state(character.pk)
    before_rollback = moment()

    report = memory_rollback(character_id=character.pk, at=at)

    assert (report.restored, report.archived) == (2, 1)
    assert live_texts(character.pk) == {"阿凛喜欢猫", "阿凛怕打雷"}
    rolled = facts_state(character.pk)
    assert {k: v for k, v in rolled.items() if k in then} == then  # every row that existed is as it was
    assert {k for k, v in rolled.items() if not v["archived"]} == set(then)
    memory_rollback(character_id=character.pk, at=before_rollback)
    assert facts_state(character.pk) == now


def test_the_raw_log_is_not_a_layer_and_is_untouched(character):
    RawMessage.objects.create(
        character=character,
        session_id="s1",
        message='{"type": "human", "data": {}}',
        timestamp=timezone.now(),
    )
    rows = RawMessage.objects.filter(character=character).count()
    assert rows == 1
    at = moment()
    facts_added(character.pk, "阿凛喜欢猫")
    memory_rollback(character_id=character.pk, at=at)
    assert RawMessage.objects.filter(character=character).count() == rows
    assert live_texts(character.pk) == set()


def test_list_routes_answer_as_of_a_time(character, client):
    facts_added(character.pk, "阿凛喜欢猫")
    at = moment()
    cat = fact_by_text(character.pk, "阿凛喜欢猫")
    with change_cause("refine"):
        fact_update(character_id=character.pk, fact_id=cat.fact_id, text="阿凛讨厌猫")
    facts_added(character.pk, "阿凛在学日语")
    then = client.get(f"{API}/facts/", {"as_of": at.isoformat()}).json()
    assert [row["text"] for row in then["results"]] == ["阿凛喜欢猫"] and then["count"] == 1
    assert client.get(f"{API}/facts/", {"as_of": "yesterday"}).status_code == 400
    now = client.get(f"{API}/facts/").json()
    assert {row["text"] for row in now["results"]} == {"阿凛讨厌猫", "阿凛在学日语"}
    for layer in ("reflections", "persona/entries"):
        assert client.get(f"{API}/{layer}/", {"as_of": at.isoformat()}).json()["results"] == []


def test_rollback_over_rest_and_the_command(character, client):
    facts_added(character.pk, "阿凛喜欢猫")
    at = moment()
    facts_added(character.pk, "阿凛在学日语")
    out = StringIO()
    call_command("memory_history", "--character", "小天", "--as-of", at.isoformat(), stdout=out)
    assert [json.loads(line)["text"] for line in out.getvalue().splitlines()] == ["阿凛喜欢猫"]
    assert client.post(f"{API}/rollback/", {"at": "soon"}, content_type="application/json").status_code == 400
    response = client.post(f"{API}/rollback/", {"at": at.isoformat()}, content_type="application/json")
    assert response.status_code == 200 and response.json()["archived"] == 1
    assert live_texts(character.pk) == {"阿凛喜欢猫"}
    undo = client.post(
        f"{API}/changes/undo/", {"source": response.json()["source"]}, content_type="application/json"
    )
    assert undo.status_code == 200 and live_texts(character.pk) == {"阿凛喜欢猫", "阿凛在学日语"}
    out = StringIO()
    call_command("memory_history", "--character", "小天", "--rollback", at.isoformat(), stdout=out)
    assert "1 archived" in out.getvalue() and live_texts(character.pk) == {"阿凛喜欢猫"}
