"""Persona corrections and the recent window's memo are history layers too; as_of honours the subject;
history travels with an export and comes back with its import (issue 49)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from facts.models import Fact
from facts.services import fact_update
from history.selectors import layer_as_of, row_versions
from history.services import memory_rollback
from nekomem.characters.models import Character
from nekomem.characters.services import character_delete, character_get_or_create
from nekomem.journal.causes import change_cause
from nekomem.journal.registry import history_layer, history_layers
from nekomem.portability import memory_export
from persona.models import PersonaCorrection
from persona.services import persona_correction_resolve, persona_entry_create
from persona.services.entries import correction_enqueue
from recent.compression import window_compress
from recent.models import RawMessage, RecentMessage
from recent.prompts import MEMO_PREFIX
from recent.services import raw_log_append, recent_messages_append
from recent.services.history import memo_text
from tests.history.support import facts_added, moment
from tests.recent.scripting import summary
from tests.support.dataset import english_messages

pytestmark = pytest.mark.django_db
API = "/api/v1/characters/小天"


def _enqueue(character: Character, old: str, new: str) -> PersonaCorrection:
    with transaction.atomic(), change_cause("promotion"):
        correction_enqueue(
            character_id=character.pk, old_text=old, new_text=new, entity="master", now=timezone.now()
        )
    return PersonaCorrection.objects.get(character=character, new_text=new)


def test_a_correction_has_versions_and_a_resolved_one_is_restored_under_persona(character, client):
    persona_entry_create(character_id=character.pk, entity="master", text="主人住在上海")
    pair = _enqueue(character, "主人住在上海", "主人搬去了杭州")
    persona_correction_resolve(character_id=character.pk, correction_pk=pair.pk, action="keep_old")
    assert not PersonaCorrection.objects.filter(pk=pair.pk).exists()

    shown = client.get(f"{API}/persona/corrections/{pair.pk}/history/").json()["versions"]
    assert [(v["cause"], v["deleted"]) for v in shown] == [("promotion", False), ("correction", True)]
    assert shown[0]["fields"]["new_text"] == "主人搬去了杭州"

    answer = client.post(
        f"{API}/persona/corrections/{pair.pk}/history/restore/", {"version": 1}, "application/json"
    )
    assert answer.status_code == 200, answer.content
    back = PersonaCorrection.objects.get(pk=pair.pk)
    assert (back.old_text, back.new_text, back.entity) == ("主人住在上海", "主人搬去了杭州", "master")
    assert row_versions(character_id=character.pk, layer="corrections", row_id=pair.dedup_key)[-1].cause == (
        "restore"
    )


def test_a_forgotten_entry_takes_its_quoting_corrections_text_out_of_their_versions(character, client):
    persona_entry_create(character_id=character.pk, entity="master", text="主人住在上海")
    pair = _enqueue(character, "主人住在上海", "主人搬去了杭州")
    entry_id = client.get(f"{API}/persona/entries/").json()["results"][0]["id"]
    assert client.delete(f"{API}/persona/entries/{entry_id}/").status_code == 200
    versions = row_versions(character_id=character.pk, layer="corrections", row_id=pair.dedup_key)
    assert versions[-1].cause == "forget" and versions[-1].fields is None
    assert all("上海" not in str(v.fields) and "杭州" not in str(v.fields) for v in versions)
    answer = client.post(
        f"{API}/persona/corrections/{pair.pk}/history/restore/", {"version": 1}, "application/json"
    )
    assert answer.status_code == 409 and not PersonaCorrection.objects.filter(pk=pair.pk).exists()


def _window(character: Character, n: int = 21) -> None:
    with transaction.atomic():
        recent_messages_append(character_id=character.pk, messages=english_messages(n))


def test_the_memo_is_versioned_restored_and_rolled_back_leaving_the_raw_log(character, client, llm_server):
    raw_log_append(
        character_id=character.pk,
        messages=[{"type": "human", "data": {"content": "hello"}}],
        timestamp=timezone.now(),
    )
    before_any = moment()
    _window(character)
    llm_server.script(summary("They met."))
    assert window_compress(character_id=character.pk).outcome == "spliced"
    first = moment()
    _window(character, 12)
    llm_server.script(summary("They met and talked about cats."))
    assert window_compress(character_id=character.pk).outcome == "spliced"
    memo = MEMO_PREFIX[character.language or "zh"]

    shown = client.get(f"{API}/recent/memo/history/").json()["versions"]
    assert [v["cause"] for v in shown] == ["compression", "compression"]
    assert shown[-1]["fields"]["text"].endswith("They met and talked about cats.")
    layer = history_layer("recent_memo")
    assert layer is not None
    assert layer_as_of(character_id=character.pk, layer=layer, at=first)["memo"]["text"].endswith("They met.")
    assert layer_as_of(character_id=character.pk, layer=layer, at=before_any) == {}

    answer = client.post(f"{API}/recent/memo/history/restore/", {"version": 1}, "application/json")
    assert answer.status_code == 200, answer.content
    restored = memo_text(character.pk)
    assert restored is not None and restored == shown[0]["fields"]["text"] and restored.startswith(memo)

    raw = list(RawMessage.objects.filter(character=character).values_list("pk", "message"))
    report = memory_rollback(character_id=character.pk, at=before_any)
    assert report.layers["recent_memo"] == 1 and memo_text(character.pk) is None
    assert RecentMessage.objects.filter(character=character).exists()  # the conversation stays
    assert list(RawMessage.objects.filter(character=character).values_list("pk", "message")) == raw


def test_as_of_and_rollback_include_the_corrections(character):
    persona_entry_create(character_id=character.pk, entity="master", text="主人住在上海")
    empty = moment()
    pair = _enqueue(character, "主人住在上海", "主人搬去了杭州")
    queued = moment()
    layer = history_layer("corrections")
    assert layer is not None
    assert layer_as_of(character_id=character.pk, layer=layer, at=empty) == {}
    assert list(layer_as_of(character_id=character.pk, layer=layer, at=queued)) == [pair.dedup_key]
    memory_rollback(character_id=character.pk, at=empty)
    assert not PersonaCorrection.objects.filter(character=character).exists()
    memory_rollback(character_id=character.pk, at=queued)
    assert PersonaCorrection.objects.get(character=character).new_text == "主人搬去了杭州"


def test_as_of_honours_the_subject_filter_of_the_list_route(character, client):
    facts_added(character.pk, "阿凛喜欢猫")
    Fact.with_subjects.filter(character=character).update(
        subject_key="group:42", extra={"subject_kind": "group", "subject_id": "42"}
    )
    facts_added(character.pk, "阿凛怕打雷")
    scoped = Fact.with_subjects.get(character=character, text="阿凛喜欢猫")
    with change_cause("edit"):  # a version of the scoped row that names its subject
        fact_update(character_id=character.pk, fact_id=scoped.fact_id, importance=2, with_subjects=True)
    at = moment().isoformat()

    def texts(**params: Any) -> set[str]:
        answer = client.get(f"{API}/facts/", {"as_of": at, **params})
        assert answer.status_code == 200, answer.content
        return {row["text"] for row in answer.json()["results"]}

    assert texts() == {"阿凛怕打雷"}
    assert texts(subject="group:42") == {"阿凛喜欢猫"}
    assert texts(subject="all") == {"阿凛喜欢猫", "阿凛怕打雷"}
    assert client.get(f"{API}/facts/", {"as_of": at, "subject": "no colon"}).status_code == 400


def _as_of_everywhere(character_id: int, moments: list[Any]) -> list[dict[str, dict[str, Any]]]:
    return [
        {
            f"{layer.name}:{row}": fields
            for layer in history_layers()
            for row, fields in layer_as_of(character_id=character_id, layer=layer, at=at).items()
        }
        for at in moments
    ]


def test_history_survives_an_export_and_import(tmp_path: Path, llm_server):
    name = "往返"
    character = character_get_or_create(name=name)
    facts_added(character.pk, "阿凛喜欢猫", "阿凛怕打雷")
    moments = [moment()]
    cat = Fact.with_subjects.get(character=character, text="阿凛喜欢猫")
    with change_cause("edit"):
        fact_update(character_id=character.pk, fact_id=cat.fact_id, text="阿凛很喜欢猫", importance=9)
    persona_entry_create(character_id=character.pk, entity="master", text="主人住在上海")
    moments.append(moment())
    _enqueue(character, "主人住在上海", "主人搬去了杭州")
    moments.append(moment())
    before = _as_of_everywhere(character.pk, moments)
    assert before[0] != before[1] != before[2]

    folder = tmp_path / "out" / name
    exported = {f.filename: f.entries for f in memory_export(character=character, folder=folder)}
    assert exported["history.ndjson"]
    character_delete(name=name)
    call_command("import_memory", str(tmp_path / "out"), verbosity=0)
    back = Character.objects.get(name=name)

    assert _as_of_everywhere(back.pk, moments) == before
    versions = row_versions(character_id=back.pk, layer="facts", row_id=cat.fact_id)
    # The old versions first (then any the import made of its own): the newest is the row as it is.
    assert [v.cause for v in versions][:2] == ["import", "edit"]
    assert versions[-1].fields is not None and versions[-1].fields["text"] == "阿凛很喜欢猫"
    # A second import of the same folder adds nothing.
    count = len(versions)
    call_command("import_memory", str(tmp_path / "out"), verbosity=0)
    again = row_versions(character_id=back.pk, layer="facts", row_id=cat.fact_id)
    assert [v.seq for v in again[:count]] == [v.seq for v in versions]


def test_the_corrections_list_answers_as_of(character, client):
    persona_entry_create(character_id=character.pk, entity="master", text="主人住在上海")
    empty = moment().isoformat()
    _enqueue(character, "主人住在上海", "主人搬去了杭州")
    queued = moment().isoformat()
    route = f"{API}/persona/corrections/"
    assert client.get(route, {"as_of": empty}).json()["results"] == []
    [pair] = client.get(route, {"as_of": queued}).json()["results"]
    assert (pair["old_text"], pair["new_text"]) == ("主人住在上海", "主人搬去了杭州")
