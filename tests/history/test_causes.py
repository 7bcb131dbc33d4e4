"""Every cause the history names is recorded by its own mechanism (issue 49): each test drives the real
mechanism (the LLM through the loopback script server) and reads the version it left."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import transaction
from django.utils import timezone

from facts.models import Fact
from facts.services import dedup_pair_queue, dedup_pairs_arbitrate, facts_archive_sweep, facts_extraction_tick
from history.selectors import Version, changes_list, row_versions
from history.services import changes_undo, history_baseline
from persona.models import PersonaCorrection, PersonaEntry
from persona.services import persona_corrections_resolve, persona_promote_tick, persona_refine
from persona.services.entries import correction_enqueue
from reflections.models import Reflection
from reflections.services import reflection_synthesize, reflections_refine
from tests.facts.conftest import T0, say
from tests.facts.factories import make_fact
from tests.persona.factories import make_entry
from tests.reflections.factories import make_reflection
from tests.support.llm_server import json_content
from tests.support.vectors import axis, store_vector

pytestmark = pytest.mark.django_db
API = "/api/v1/characters/小天"


def last(character_id: int, layer: str, row_id: str) -> Version:
    return row_versions(character_id=character_id, layer=layer, row_id=row_id)[-1]


def causes_of(character_id: int, layer: str) -> set[str]:
    return set(changes_list(character_id=character_id, layer=layer).values_list("cause", flat=True))


def test_extraction(character, llm_server):
    say(character, T0, ("human", "我叫阿凛，下周三过生日"))
    llm_server.script(
        json_content([{"text": "阿凛下周三过生日", "importance": 7, "entity": "master", "event_when": None}])
    )
    assert facts_extraction_tick(character_id=character.pk, now=T0 + timedelta(seconds=15)).created == 1
    fact = Fact.objects.get(character=character)
    version = last(character.pk, "facts", fact.fact_id)
    assert version.cause == "extraction" and version.source


def test_dedup(character, llm_server):
    old = make_fact(character=character, text="阿凛喜欢第0本书", importance=5)
    new = make_fact(character=character, text="阿凛很喜欢第0本书", importance=8)
    dedup_pair_queue(character_id=character.pk, candidate=new, existing=old, cosine=None)
    llm_server.script(json_content([{"index": 0, "action": "merge", "text": "阿凛非常喜欢第0本书"}]))
    assert dedup_pairs_arbitrate(character_id=character.pk, now=T0).resolved == 1
    assert causes_of(character.pk, "facts") == {"dedup"}


def test_synthesis(character, llm_server):
    base = timezone.now() - timedelta(hours=1)
    for i in range(5):
        make_fact(character=character, text=f"阿凛喜欢第{i}件安静的事", importance=6, created_at=base)
    llm_server.script(
        json_content(
            {
                "reflection": "阿凛是个喜欢安静生活的人",
                "entity": "master",
                "relation_type": "trait",
                "temporal_scope": "pattern",
                "subject": "生活方式",
                "event_when": None,
            }
        )
    )
    assert reflection_synthesize(character_id=character.pk).reflection is not None
    assert causes_of(character.pk, "reflections") == {"synthesis"}
    # The facts it absorbed are versions of the same pass.
    assert causes_of(character.pk, "facts") == {"synthesis"}


def test_promotion(character, llm_server):
    now = timezone.now()
    reflection = make_reflection(
        character=character,
        text="主人最近迷上了做手冲咖啡",
        status=Reflection.Status.CONFIRMED,
        confirmed_at=now - timedelta(days=1),
        reinforcement=3.0,
        rein_last_signal_at=now,
    )
    llm_server.script(json_content({"action": "promote_fresh", "reason": "新信息"}))
    assert persona_promote_tick(character_id=character.pk).outcomes == {reflection.reflection_id: "promoted"}
    entry = PersonaEntry.objects.get(character=character, entry_id=f"prom_{reflection.reflection_id}")
    assert last(character.pk, "persona", entry.entry_id).cause == "promotion"
    assert last(character.pk, "reflections", reflection.reflection_id).cause == "promotion"


def _reflection(character, text: str, vector, **fields) -> Reflection:
    return store_vector(make_reflection(character=character, text=text, **fields), vector)


def test_refine_names_each_action_and_one_undo_takes_the_pass_back(character, llm_server, client):
    merged = [
        _reflection(character, "主人似乎很喜欢猫", axis(0), reinforcement=0.5),
        _reflection(character, "主人看起来特别喜欢猫", axis(0, 0.05), reinforcement=1.8),
    ]
    mixed = _reflection(character, "主人爱跑步，也在学日语", axis(1), reinforcement=1.2)
    dropped = _reflection(character, "主人爱跑步", axis(1, 0.05))
    vague = _reflection(character, "主人好像有点喜欢画画吧", axis(2))
    _reflection(character, "主人喜欢画画", axis(2, 0.05))
    history_baseline(character_id=character.pk)
    llm_server.script(
        json_content([{"action": "merge", "ids": [0, 1], "text": "主人非常喜欢猫"}]),
        json_content(
            [
                {"action": "split", "id": 0, "texts": ["主人爱跑步", "主人在学日语"]},
                {"action": "discard", "id": 1},
            ]
        ),
        json_content([{"action": "modify", "id": 0, "text": "主人喜欢水彩画"}]),
    )
    assert reflections_refine(character_id=character.pk).actions == 4

    changes = changes_list(character_id=character.pk, cause="refine")
    detail = {row: event.payload.get("detail") for event in changes for row in [event.row]}
    assert detail[merged[0].reflection_id] == detail[merged[1].reflection_id] == "merge"
    assert detail[mixed.reflection_id] == "split" and detail[dropped.reflection_id] == "discard"
    assert detail[vague.reflection_id] == "modify"
    part = Reflection.objects.get(character=character, text="主人在学日语")
    assert detail[part.reflection_id] == "split"
    # Each cluster is a job of the pass: its source, which an undo names.
    assert all(event.source.startswith("job:") for event in changes)

    shown = client.get(f"{API}/reflections/{merged[1].reflection_id}/history/").json()
    assert shown["versions"][-1]["detail"] == "merge" and shown["versions"][-1]["cause"] == "refine"

    changes_undo(
        character_id=character.pk, source=last(character.pk, "reflections", merged[0].reflection_id).source
    )
    for row in merged:
        before = (row.text, row.reinforcement, row.disputation, row.status)
        row.refresh_from_db()
        # Both members are back with their own evidence, and neither is absorbed into the other.
        assert (row.text, row.reinforcement, row.disputation, row.status) == before
        assert row.absorbed_into is None
    # The split's job undone: the part it made is archived, the member has its text back.
    changes_undo(
        character_id=character.pk, source=last(character.pk, "reflections", mixed.reflection_id).source
    )
    assert Reflection.objects.get(pk=part.pk).status == "archived"
    assert Reflection.objects.get(pk=mixed.pk).text == "主人爱跑步，也在学日语"


def test_persona_refine_names_its_action(character, llm_server):
    first = store_vector(make_entry(character=character, section="master", text="主人喜欢猫"), axis(0))
    second = store_vector(
        make_entry(character=character, section="master", text="主人很喜欢猫"), axis(0, 0.05)
    )
    history_baseline(character_id=character.pk)  # the deleted member's version needs an earlier one
    llm_server.script(json_content([{"action": "merge", "ids": [0, 1], "text": "主人非常喜欢猫"}]))
    assert persona_refine(character_id=character.pk).actions == 1
    for entry in (first, second):
        version = last(character.pk, "persona", entry.entry_id)
        assert (version.cause, version.detail) == ("refine", "merge")


def test_correction_by_the_resolver(character, llm_server):
    entry = make_entry(character=character, section="master", text="主人住在上海")
    with transaction.atomic():
        correction_enqueue(
            character_id=character.pk,
            old_text="主人住在上海",
            new_text="主人搬去了杭州",
            entity="master",
            now=timezone.now(),
        )
    pair = PersonaCorrection.objects.get(character=character)
    llm_server.script(json_content([{"index": 0, "action": "merge", "text": "主人从上海搬去了杭州"}]))
    assert persona_corrections_resolve(character_id=character.pk).resolved == 1
    assert last(character.pk, "persona", entry.entry_id).cause == "correction"
    gone = last(character.pk, "corrections", pair.dedup_key)
    assert (gone.cause, gone.fields) == ("correction", None)


def test_archive_sweep(character):
    fact = make_fact(character=character, text="阿凛喜欢猫", absorbed=True, created_at=T0 - timedelta(days=8))
    assert facts_archive_sweep(character_id=character.pk, now=T0) == 1
    assert last(character.pk, "facts", fact.fact_id).cause == "archive"


def test_forget_rest_edit_and_mcp_name_how_a_person_came_in(character, client):
    fact = make_fact(character=character, text="阿凛喜欢猫")
    other = make_fact(character=character, text="阿凛怕打雷")
    history_baseline(character_id=character.pk)
    assert (
        client.patch(f"{API}/facts/{fact.fact_id}/", {"importance": 3}, "application/json").status_code == 200
    )
    assert last(character.pk, "facts", fact.fact_id).cause == "rest"
    answer = client.post(
        "/browse/小天/facts/edit/",
        {"fact_id": fact.fact_id, "text": "阿凛爱猫", "importance": 4, "entity": "master"},
    )
    assert answer.status_code == 302
    assert last(character.pk, "facts", fact.fact_id).cause == "edit"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "update_memory", "arguments": {"id": fact.fact_id, "text": "阿凛非常爱猫"}},
    }
    headers = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
    assert client.post("/mcp/小天", json.dumps(body), "application/json", headers=headers).status_code == 200
    assert last(character.pk, "facts", fact.fact_id).cause == "mcp"
    assert client.delete(f"{API}/facts/{other.fact_id}/").status_code == 200
    assert last(character.pk, "facts", other.fact_id).cause == "forget"


def test_import_and_markdown_import(character, tmp_path, internal_client, llm_server):
    folder = tmp_path / "memory" / "小天"
    folder.mkdir(parents=True)
    entry = {
        "id": "fact_20240501120000_aaaaaaaa",
        "text": "阿凛在学日语",
        "created_at": "2024-05-01T12:00:00",
    }
    (folder / "facts.json").write_text(json.dumps([entry], ensure_ascii=False), encoding="utf-8")
    call_command("import_memory", str(tmp_path / "memory"), verbosity=0)
    assert last(character.pk, "facts", entry["id"]).cause == "import"

    request = {
        "character_name": "小天",
        "source_format": "openclaw",
        "imported_files": ["MEMORY.md"],
        "candidates": [{"text": "主人对花生过敏", "target": "facts", "source_file": "MEMORY.md"}],
        "warning_count": 0,
        "language": "zh",
    }
    answer = internal_client.post(
        "/internal/memory/import_external_markdown",
        data=json.dumps(request, ensure_ascii=False),
        content_type="application/json",
    )
    assert answer.status_code == 200, answer.content
    peanut = Fact.objects.get(character=character, text="主人对花生过敏")
    assert last(character.pk, "facts", peanut.fact_id).cause == "markdown_import"


def test_undo_is_a_cause_of_its_own(character, client):
    fact = make_fact(character=character, text="阿凛喜欢猫")
    history_baseline(character_id=character.pk)
    assert (
        client.patch(f"{API}/facts/{fact.fact_id}/", {"importance": 2}, "application/json").status_code == 200
    )
    source = last(character.pk, "facts", fact.fact_id).source
    answer = client.post(f"{API}/changes/undo/", {"source": source}, "application/json")
    assert answer.status_code == 200
    version = last(character.pk, "facts", fact.fact_id)
    assert (version.cause, version.source) == ("undo", answer.json()["source"])
