"""Every change of a fact, reflection or persona entry is a version with its cause and source (issue 49)."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from facts.services import fact_update
from facts.services.archive import fact_archive, facts_archive_sweep
from history.selectors import row_versions
from nekomem.journal.causes import change_cause
from nekomem.journal.compaction import HISTORY_KEEP_VERSIONS, events_compact, history_retention
from nekomem.journal.events import VERSION_EVENT
from nekomem.journal.models import Event
from tests.history.support import fact_by_text, facts_added

pytestmark = pytest.mark.django_db


def test_a_change_is_a_version_with_the_rows_whole_state_cause_and_source(character):
    source = facts_added(character.pk, "阿凛喜欢猫")
    fact = fact_by_text(character.pk, "阿凛喜欢猫")
    with change_cause("edit", source="request:abc"):
        fact_update(character_id=character.pk, fact_id=fact.fact_id, importance=9)
    versions = row_versions(character_id=character.pk, layer="facts", row_id=fact.fact_id)
    assert [(v.version, v.cause, v.source) for v in versions] == [
        (1, "import", source),
        (2, "edit", "request:abc"),
    ]
    assert versions[0].fields is not None and versions[1].fields is not None
    assert versions[0].fields["importance"] == 7 and versions[1].fields["importance"] == 9
    assert versions[1].fields["text"] == "阿凛喜欢猫" and versions[1].fields["archived"] is False
    assert "embedding" not in versions[1].fields  # the vector is re-made, never versioned


def test_the_originals_events_carry_the_cause_too(character):
    facts_added(character.pk, "阿凛喜欢猫")
    fact = fact_by_text(character.pk, "阿凛喜欢猫")
    with change_cause("edit"):
        fact_archive(character_id=character.pk, fact_id=fact.fact_id)
    archived = Event.objects.get(character=character, type="fact.archived")
    assert archived.cause == "edit" and archived.source.startswith("edit:")


def test_the_archive_sweep_stamps_its_own_cause_over_the_callers(character):
    facts_added(character.pk, "阿凛喜欢猫")
    fact = fact_by_text(character.pk, "阿凛喜欢猫")
    old = timezone.now().replace(year=2020)
    type(fact).with_subjects.filter(pk=fact.pk).update(absorbed=True, created_at=old)
    with change_cause("chat", source="request:outer"):
        assert facts_archive_sweep(character_id=character.pk, force=True) == 1
    last = row_versions(character_id=character.pk, layer="facts", row_id=fact.fact_id)[-1]
    assert last.fields is not None
    # The mechanism is the innermost; the request that set it off stays the source, so undoing it
    # takes this back too.
    assert (last.cause, last.source, last.fields["archived"]) == ("archive", "request:outer", True)


def test_rest_and_browser_requests_name_themselves(character, client):
    facts_added(character.pk, "阿凛喜欢猫")
    fact = fact_by_text(character.pk, "阿凛喜欢猫")
    response = client.patch(
        f"/api/v1/characters/小天/facts/{fact.fact_id}/", {"importance": 3}, content_type="application/json"
    )
    assert response.status_code == 200
    last = row_versions(character_id=character.pk, layer="facts", row_id=fact.fact_id)[-1]
    assert last.cause == "rest" and last.source.startswith("request:")


def test_a_deletion_is_a_version_without_fields_and_forget_is_its_cause(character, client):
    facts_added(character.pk, "阿凛喜欢猫")
    fact = fact_by_text(character.pk, "阿凛喜欢猫")
    assert client.delete(f"/api/v1/characters/小天/facts/{fact.fact_id}/").status_code == 200
    last = row_versions(character_id=character.pk, layer="facts", row_id=fact.fact_id)[-1]
    assert (last.cause, last.fields) == ("forget", None)


def test_versions_are_neither_replayed_nor_dropped_by_compaction(character):
    facts_added(character.pk, "阿凛喜欢猫", "阿凛怕打雷")
    versions = Event.objects.filter(character=character, type=VERSION_EVENT).count()
    assert versions == 2
    _, seeds = events_compact(character_id=character.pk, force=True)
    assert Event.objects.filter(character=character, type=VERSION_EVENT).count() == versions
    assert Event.objects.filter(character=character, seed=True, cause="compaction").count() == seeds


def test_an_mcp_edit_names_mcp(character, client):
    facts_added(character.pk, "阿凛喜欢猫")
    fact = fact_by_text(character.pk, "阿凛喜欢猫")
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "update_memory", "arguments": {"id": fact.fact_id, "text": "阿凛爱猫"}},
        }
    )
    headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
    answer = client.post("/mcp/小天", data=body, content_type="application/json", headers=headers)
    assert answer.status_code == 200 and not answer.json()["result"].get("isError")
    last = row_versions(character_id=character.pk, layer="facts", row_id=fact.fact_id)[-1]
    assert last.fields is not None and last.fields["text"] == "阿凛爱猫"
    assert last.cause == "mcp" and last.source.startswith("request:")


def test_the_chat_routes_write_no_version(character, post_history, client):
    """/cache and /query_memory ride on no versioned write: the chat path pays nothing for history."""
    facts_added(character.pk, "阿凛喜欢猫")
    before = Event.objects.filter(character=character, type=VERSION_EVENT).count()
    assert post_history("cache", "小天", ("human", "我今天去看了猫展"), ("ai", "好呀")).status_code == 200
    asked = client.post("/query_memory/小天", data={"query": "猫"}, content_type="application/json")
    assert asked.status_code == 200
    assert Event.objects.filter(character=character, type=VERSION_EVENT).count() == before == 1


def test_compaction_prunes_versions_past_the_retention_but_keeps_each_rows_last_five(character):
    facts_added(character.pk, "The master keeps a cello in the hall.", "The master likes plum tea.")
    cello = fact_by_text(character.pk, "The master keeps a cello in the hall.")
    for importance in range(1, 9):
        fact_update(character_id=character.pk, fact_id=cello.fact_id, importance=importance)
    versions = Event.objects.filter(character=character, type=VERSION_EVENT)
    cello_versions = versions.filter(row=cello.fact_id)
    assert cello_versions.count() > HISTORY_KEEP_VERSIONS
    newest = list(cello_versions.order_by("-seq").values_list("pk", flat=True)[:HISTORY_KEEP_VERSIONS])
    others = versions.exclude(row=cello.fact_id).count()

    # Inside the retention nothing goes; past it each row keeps its last five.
    events_compact(character_id=character.pk, force=True)
    assert cello_versions.count() > HISTORY_KEEP_VERSIONS
    events_compact(character_id=character.pk, now=timezone.now() + history_retention() + timedelta(days=1))
    assert sorted(cello_versions.values_list("pk", flat=True)) == sorted(newest)
    assert versions.exclude(row=cello.fact_id).count() == others
