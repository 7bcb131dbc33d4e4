"""``POST /internal/memory/import_external_markdown`` (reference §1.4, §1.7) through the loopback LLM."""

from __future__ import annotations

import json
from typing import Any

import pytest

from facts.models import Fact
from persona.models import PersonaEntry
from tests.support.llm_server import error, json_content

pytestmark = pytest.mark.django_db

URL = "/internal/memory/import_external_markdown"


def post(client: Any, body: Any) -> Any:
    return client.post(URL, data=json.dumps(body, ensure_ascii=False), content_type="application/json")


def body(**more: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "character_name": "小八",
        "source_format": "openclaw",
        "imported_files": ["USER.md", "SOUL.md", "MEMORY.md", "memory/2026-11-02.md"],
        "candidates": [
            {"text": "主人叫小林，住在杭州", "entity": "master", "target": "persona", "source_file": "U.md"},
            {"text": "主人喜欢喝乌龙茶", "entity": "master", "target": "persona", "source_file": "U.md"},
            {"text": "I am a cheerful catgirl", "entity": "neko", "target": "persona", "source_file": "S.md"},
            {"text": "主人对花生过敏", "target": "facts", "source_file": "MEMORY.md"},
            {
                "text": "Went hiking at West Lake with the master",
                "target": "facts",
                "source_file": "memory/2026-11-02.md",
                "event_date": "2026-11-02",
            },
        ],
        "warning_count": 1,
        "language": "zh",
    }
    base.update(more)
    return base


def test_persona_is_fused_per_entity_and_facts_are_appended(internal_client, llm_server) -> None:
    llm_server.script(json_content(["主人小林住在杭州，爱喝乌龙茶"]), json_content(["我是开朗的猫娘"]))
    answer = post(internal_client, body())
    assert answer.status_code == 200, answer.content
    reply = answer.json()
    assert reply["status"] == "success" and reply["source_format"] == "openclaw"
    assert (reply["added_persona"], reply["added_facts"], reply["skipped_duplicates"]) == (2, 2, 0)
    assert reply["warning_count"] == 1 and reply["character_name"] == "小八"
    # one fusion call per entity, master's candidates together, in the user's language
    assert len(llm_server.bodies) == 2
    first = llm_server.bodies[0]["messages"][0]["content"]
    assert "主人叫小林" in first and "乌龙茶" in first and "cheerful" not in first and "融合" in first
    texts = set(PersonaEntry.objects.filter(source="external_import").values_list("section", "text"))
    assert texts == {("master", "主人小林住在杭州，爱喝乌龙茶"), ("neko", "我是开朗的猫娘")}
    facts = {f.text: f for f in Fact.objects.all()}
    assert {f.importance for f in facts.values()} == {7}
    assert {f.source for f in facts.values()} == {"user_observation"}
    dated = facts["Went hiking at West Lake with the master"]
    assert dated.event_start_at is not None and dated.event_start_at.date().isoformat() == "2026-11-02"


def test_a_provider_failing_halfway_then_retried_adds_nothing_twice(internal_client, llm_server) -> None:
    llm_server.script(json_content(["主人小林住在杭州，爱喝乌龙茶"]), error(500), error(500), error(500))
    answer = post(internal_client, body())
    assert answer.status_code == 500, answer.content
    reply = answer.json()
    assert reply["error_code"] == "external_import_partial"
    assert reply["partial_import"]["added_persona"] == 1 and reply["partial_import"]["added_facts"] == 2
    assert reply["partial_import"]["failed_entities"] == ["neko"]
    assert not PersonaEntry.objects.filter(section="neko", source="external_import").exists()
    # the retry fuses only the entity that failed; facts and master's statements are not repeated
    llm_server.script(json_content(["我是开朗的猫娘"]))
    again = post(internal_client, body())
    assert again.status_code == 200, again.content
    assert (again.json()["added_persona"], again.json()["added_facts"]) == (1, 0)
    assert again.json()["skipped_duplicates"] == 2
    assert len(llm_server.bodies) == 5
    assert Fact.objects.count() == 2
    assert PersonaEntry.objects.filter(source="external_import").count() == 2


def test_more_than_1000_candidates_is_400(internal_client, llm_server) -> None:
    # §1.7: "400 for a bad format, count or candidate"; 413 is kept for too much text.
    many = [{"text": f"fact {i}", "target": "facts"} for i in range(1001)]
    answer = post(internal_client, body(candidates=many))
    assert answer.status_code == 400, answer.content
    assert answer.json()["error_code"] == "external_import_invalid"
    assert "1000" in answer.json()["message"]
    exactly = [{"text": f"fact {i}", "target": "facts"} for i in range(1000)]
    answer = post(internal_client, body(candidates=exactly))
    assert answer.status_code == 200, answer.content
    assert answer.json()["added_facts"] == 1000
    assert llm_server.bodies == []


def test_too_large_is_413(internal_client, llm_server) -> None:
    huge = [{"text": "猫" * 7000, "target": "persona"}, {"text": "狗" * 7000, "target": "persona"}]
    answer = post(internal_client, body(candidates=huge))
    assert answer.status_code == 413 and answer.json()["error_code"] == "external_import_too_large"
    assert not Fact.objects.exists() and not PersonaEntry.objects.filter(source="external_import").exists()
    assert llm_server.bodies == []


@pytest.mark.parametrize(
    "bad",
    [
        {"source_format": "notion"},
        {"candidates": []},
        {"candidates": [{"text": "x", "entity": "stranger"}]},
        {"candidates": [{"text": "x" * 8001}]},
        {"candidates": [{"text": "x", "target": "facts", "event_date": "yesterday"}]},
        {"character_name": "../etc"},
    ],
)
def test_bad_input_is_400_and_stores_nothing(internal_client, llm_server, bad) -> None:
    answer = post(internal_client, body(**bad))
    assert answer.status_code == 400, answer.content
    assert answer.json()["error_code"] == "external_import_invalid"
    assert not Fact.objects.exists()


def test_import_while_released_is_409_and_stores_nothing(internal_client, llm_server) -> None:
    from nekomem.characters.services import character_release_held

    with character_release_held(name="小八"):
        answer = post(internal_client, body())
        one_fact = [{"text": "x", "target": "facts"}]
        other = post(internal_client, body(character_name="小九", candidates=one_fact))
    assert answer.status_code == 409, answer.content
    assert answer.json() == {"status": "cancelled", "message": "character release in progress"}
    assert llm_server.bodies == [] and not Fact.with_subjects.filter(character__name="小八").exists()
    assert not PersonaEntry.with_subjects.filter(source="external_import").exists()
    # only that character is fenced, and only while the release lasts
    assert other.status_code == 200, other.content
    llm_server.script(json_content(["主人小林住在杭州"]), json_content(["我是开朗的猫娘"]))
    assert post(internal_client, body()).status_code == 200


def test_a_release_holds_its_fence_in_the_database_and_lifts_it(internal_client) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from nekomem.characters.models import CharacterRelease
    from nekomem.characters.selectors import RELEASE_HOLD_STALE, character_release_in_progress

    assert internal_client.post("/release_character/小八", content_type="application/json").status_code == 200
    assert not CharacterRelease.objects.exists() and not character_release_in_progress(name="小八")
    # a row another worker wrote is seen here; one left by a crashed release expires
    CharacterRelease.objects.create(name="小八", started_at=timezone.now())
    assert character_release_in_progress(name="小八")
    assert post(internal_client, body()).status_code == 409
    CharacterRelease.objects.filter(name="小八").update(
        started_at=timezone.now() - RELEASE_HOLD_STALE - timedelta(seconds=1)
    )
    assert not character_release_in_progress(name="小八")
