"""Undo of a pass, a job or an import; restore of one version; never silently overwriting (issue 49)."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from facts.models import Fact
from facts.services import fact_update
from history.selectors import changes_list, row_versions
from history.services import changes_undo, history_baseline
from nekomem.journal.causes import change_cause
from nekomem.journal.models import Event
from persona.models import PersonaCorrection, PersonaEntry
from persona.services import persona_correction_resolve, persona_entry_create
from persona.services.entries import correction_enqueue
from reflections.models import Reflection
from reflections.services import reflections_refine
from tests.history.support import fact_by_text, facts_added, facts_state, live_texts
from tests.reflections.factories import make_reflection
from tests.support.llm_server import json_content
from tests.support.vectors import axis, store_vector

pytestmark = pytest.mark.django_db
API = "/api/v1/characters/小天"


def test_a_refine_merge_undone_brings_back_both_members_with_their_evidence(character, llm_server):
    first = store_vector(
        make_reflection(character=character, text="主人似乎很喜欢猫", status="confirmed", reinforcement=0.5),
        axis(0),
    )
    second = store_vector(
        make_reflection(character=character, text="主人看起来特别喜欢猫", reinforcement=1.8, disputation=0.3),
        axis(0, 0.05),
    )
    assert history_baseline(character_id=character.pk) == 2  # rows from before history began
    llm_server.script(json_content([{"action": "merge", "ids": [0, 1], "text": "主人非常喜欢猫"}]))
    assert reflections_refine(character_id=character.pk).actions == 1
    merged = changes_list(character_id=character.pk, cause="refine").first()
    assert merged is not None and merged.source.startswith("job:")

    report = changes_undo(character_id=character.pk, source=merged.source)

    first.refresh_from_db()
    second.refresh_from_db()
    assert {r["row_id"] for r in report.restored} == {first.reflection_id, second.reflection_id}
    assert (first.text, first.status, first.reinforcement) == ("主人似乎很喜欢猫", "confirmed", 0.5)
    assert (second.text, second.status, second.absorbed_into) == ("主人看起来特别喜欢猫", "pending", None)
    assert (second.reinforcement, second.disputation) == (1.8, 0.3)
    assert "merged_from_ids" not in first.extra
    undo = row_versions(character_id=character.pk, layer="reflections", row_id=first.reflection_id)[-1]
    assert (undo.cause, undo.source) == ("undo", report.source)


def test_an_import_undone_removes_exactly_what_it_added(character, tmp_path):
    facts_added(character.pk, "阿凛喜欢猫")
    before = live_texts(character.pk)
    folder = tmp_path / "memory" / "小天"
    folder.mkdir(parents=True)
    entries = [
        {"id": f"fact_20240501120000_{key * 8}", "text": text, "created_at": "2024-05-01T12:00:00"}
        for key, text in (("a", "阿凛在学日语"), ("b", "阿凛养了一只猫"))
    ]
    (folder / "facts.json").write_text(json.dumps(entries, ensure_ascii=False), encoding="utf-8")
    call_command("import_memory", str(tmp_path / "memory"), verbosity=0)
    assert live_texts(character.pk) == before | {"阿凛在学日语", "阿凛养了一只猫"}
    imported = changes_list(character_id=character.pk, cause="import").first()
    assert imported is not None

    report = changes_undo(character_id=character.pk, source=imported.source)

    assert live_texts(character.pk) == before
    assert {r["row_id"] for r in report.archived} == {
        "fact_20240501120000_aaaaaaaa",
        "fact_20240501120000_bbbbbbbb",
    }
    assert not report.restored and not report.conflicts


def test_an_undo_can_be_undone(character):
    facts_added(character.pk, "阿凛喜欢猫")
    fact = fact_by_text(character.pk, "阿凛喜欢猫")
    with change_cause("dedup") as bad:
        fact_update(character_id=character.pk, fact_id=fact.fact_id, text="阿凛讨厌猫")
    after_bad = facts_state(character.pk)
    undo = changes_undo(character_id=character.pk, source=bad)
    assert fact_by_text(character.pk, "阿凛喜欢猫").pk == fact.pk
    redo = changes_undo(character_id=character.pk, source=undo.source)
    assert facts_state(character.pk) == after_bad
    assert len(redo.restored) == 1


def test_undo_leaves_a_row_changed_again_since_and_names_it(character):
    facts_added(character.pk, "阿凛喜欢猫")
    fact = fact_by_text(character.pk, "阿凛喜欢猫")
    with change_cause("refine") as bad:
        fact_update(character_id=character.pk, fact_id=fact.fact_id, text="阿凛讨厌猫")
    with change_cause("edit"):
        fact_update(character_id=character.pk, fact_id=fact.fact_id, text="阿凛最喜欢橘猫")
    report = changes_undo(character_id=character.pk, source=bad)
    assert report.conflicts == [{"layer": "facts", "row_id": fact.fact_id}]
    assert Fact.objects.get(pk=fact.pk).text == "阿凛最喜欢橘猫"
    forced = changes_undo(character_id=character.pk, source=bad, force=True)
    assert forced.restored and Fact.objects.get(pk=fact.pk).text == "阿凛喜欢猫"


def test_restore_after_a_later_edit_is_refused_with_a_reason_unless_forced(character, client):
    facts_added(character.pk, "阿凛喜欢猫")
    fact = fact_by_text(character.pk, "阿凛喜欢猫")
    with change_cause("refine"):
        fact_update(character_id=character.pk, fact_id=fact.fact_id, text="阿凛讨厌猫")
    url = f"{API}/facts/{fact.fact_id}/history/"
    # Only machines changed it since version 1: the restore goes through, as a change of its own.
    ok = client.post(url + "restore/", {"version": 1}, content_type="application/json")
    assert ok.status_code == 200 and Fact.objects.get(pk=fact.pk).text == "阿凛喜欢猫"
    client.patch(f"{API}/facts/{fact.fact_id}/", {"text": "阿凛最喜欢橘猫"}, content_type="application/json")
    refused = client.post(url + "restore/", {"version": 2}, content_type="application/json")
    assert refused.status_code == 409
    assert refused.json()["reason"] == "edited_since" and refused.json()["versions"] == [4]
    assert Fact.objects.get(pk=fact.pk).text == "阿凛最喜欢橘猫"
    forced = client.post(url + "restore/", {"version": 2, "force": True}, content_type="application/json")
    assert forced.status_code == 200 and Fact.objects.get(pk=fact.pk).text == "阿凛讨厌猫"
    versions = client.get(url).json()["versions"]
    assert [v["cause"] for v in versions] == ["import", "refine", "restore", "rest", "restore"]
    assert [v["version"] for v in versions] == [1, 2, 3, 4, 5]


def test_a_forgotten_version_is_never_restored(character, client):
    facts_added(character.pk, "阿凛喜欢猫")
    fact = fact_by_text(character.pk, "阿凛喜欢猫")
    assert client.delete(f"{API}/facts/{fact.fact_id}/").status_code == 200
    # Forgetting blanks the text of every earlier version: when and why stay, what it said goes.
    kept = Event.objects.filter(character=character, row=fact.fact_id, type="memory.version")
    assert kept.count() == 2 and not [
        e for e in kept if "阿凛喜欢猫" in json.dumps(e.payload, ensure_ascii=False)
    ]
    response = client.post(
        f"{API}/facts/{fact.fact_id}/history/restore/", {"version": 1}, content_type="application/json"
    )
    assert response.status_code == 409 and response.json()["reason"] == "forgotten"
    assert not Fact.with_subjects.filter(pk=fact.pk).exists()


def test_changes_list_and_undo_over_rest(character, client):
    source = facts_added(character.pk, "阿凛喜欢猫", "阿凛怕打雷")
    listed = client.get(f"{API}/changes/?cause=import&layer=facts").json()
    assert {r["cause"] for r in listed["results"]} == {"import"} and listed["count"] == 2
    assert {r["source"] for r in listed["results"]} == {source}
    assert client.get(f"{API}/changes/?since=not-a-time").status_code == 400
    assert client.post(f"{API}/changes/undo/", {}, content_type="application/json").status_code == 400
    undone = client.post(f"{API}/changes/undo/", {"source": source}, content_type="application/json")
    assert undone.status_code == 200 and len(undone.json()["archived"]) == 2
    assert live_texts(character.pk) == set()
    one = client.get(f"{API}/changes/?cause=undo").json()["results"][0]
    again = client.post(f"{API}/changes/undo/", {"id": one["id"]}, content_type="application/json")
    assert again.status_code == 200 and len(again.json()["restored"]) == 1
    missing = client.post(f"{API}/changes/undo/", {"source": "nothing"}, content_type="application/json")
    assert missing.status_code == 404


def test_reflection_and_persona_routes_answer_history(character, client):
    reflection = make_reflection(character=character, text="主人似乎很喜欢猫")
    history_baseline(character_id=character.pk)
    versions = client.get(f"{API}/reflections/{reflection.reflection_id}/history/").json()["versions"]
    assert [v["cause"] for v in versions] == ["baseline"] and versions[0]["fields"][
        "text"
    ] == "主人似乎很喜欢猫"
    assert client.get(f"{API}/nothing/x/history/").status_code == 404
    assert Reflection.objects.count() == 1


def test_a_correction_that_replaced_an_entry_is_undone(character):
    persona_entry_create(character_id=character.pk, entity="master", text="主人住在上海")
    old = PersonaEntry.objects.get(character=character, text="主人住在上海")
    with transaction.atomic():
        correction_enqueue(
            character_id=character.pk,
            old_text="主人住在上海",
            new_text="主人搬去了杭州",
            entity="master",
            now=timezone.now(),
        )
    queued = PersonaCorrection.objects.get(character=character)
    persona_correction_resolve(character_id=character.pk, correction_pk=queued.pk, action="keep_new")
    assert not PersonaEntry.objects.filter(pk=old.pk).exists()
    resolved = changes_list(character_id=character.pk, cause="correction").first()
    assert resolved is not None

    report = changes_undo(character_id=character.pk, source=resolved.source)

    back = PersonaEntry.objects.get(pk=old.pk)
    assert (back.text, back.entry_id, back.section) == ("主人住在上海", old.entry_id, "master")
    assert not PersonaEntry.objects.filter(
        character=character, text="主人搬去了杭州", archive_shard_path=None
    )
    # The pair is a history layer of its own: the undo puts it back in the queue, to be resolved again.
    assert {r["layer"] for r in report.restored} == {"persona", "corrections"}
    assert len(report.archived) == 1
    again = PersonaCorrection.objects.get(character=character)
    assert (again.pk, again.old_text, again.new_text) == (queued.pk, "主人住在上海", "主人搬去了杭州")
