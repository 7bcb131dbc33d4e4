"""``scoped_history``, single shape (reference §1.6): extraction through the loopback LLM."""

from __future__ import annotations

from typing import Any

import pytest

from facts.models import Fact
from tests.conftest import history
from tests.recall.test_scoped_routes import ALICE, GROUP, post
from tests.support.llm_server import error, json_content

pytestmark = pytest.mark.django_db


def facts_reply(*texts: str) -> Any:
    return json_content([{"text": t, "importance": 6, "entity": "master", "event_when": None} for t in texts])


def prompt_of(body: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in body["messages"])


def test_a_participant_digest_is_attributed_to_the_speaker(internal_client, llm_server) -> None:
    llm_server.script(facts_reply("Alice 养了一只叫团子的猫"))
    body = {
        "input_history": history(("human", "我家团子今天又打翻了水杯"), ("ai", "团子好调皮")),
        "subject": ALICE,
        "speaker_label": "Alice",
        "speaker_id": "acct-1001",
        "language": "zh",
    }
    answer = post(internal_client, "scoped_history", body)
    assert answer.status_code == 200, answer.content
    reply = answer.json()
    assert reply["status"] == "processed" and reply["created"] == 1 and len(reply["fact_ids"]) == 1
    assert reply["trust"]["persisted"] is None  # nothing about trust to write: accepted by the client
    prompt = prompt_of(llm_server.bodies[0])
    assert "Alice" in prompt and "我家团子今天又打翻了水杯" in prompt
    assert "acct-1001" not in prompt  # the stable id is never shown to the model
    fact = Fact.with_subjects.get()
    assert fact.subject_key == "group_participant:qq:7788:1001" and fact.extra["speaker_label"] == "Alice"
    assert not Fact.objects.exists()


def test_a_group_digest_and_an_empty_extraction(internal_client, llm_server) -> None:
    llm_server.script(json_content([]))
    body = {"input_history": history(("human", "大家好")), "subject": GROUP}
    answer = post(internal_client, "scoped_history", body)
    assert answer.status_code == 200 and answer.json()["created"] == 0
    assert "group_chat:qq:7788" in prompt_of(llm_server.bodies[0])


def test_a_failing_provider_is_502_and_nothing_is_stored(internal_client, llm_server) -> None:
    llm_server.script(error(500), error(500), error(500))
    body = {"input_history": history(("human", "我明天去北京")), "subject": ALICE, "speaker_label": "Alice"}
    answer = post(internal_client, "scoped_history", body)
    assert answer.status_code == 502
    assert answer.json() == {"detail": "scoped fact extraction failed; retry later"}
    assert not Fact.with_subjects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {"input_history": "[]", "subject": ALICE},
        {"input_history": history(*[("human", "x")] * 201), "subject": ALICE},
        {"input_history": "not json", "subject": ALICE},
        {"input_history": history(("human", "x")), "subject": {"subject_kind": "x", "subject_id": "qq:1"}},
        {"input_history": history(("human", "x")), "subject": ALICE, "speaker_label": "L" * 65},
        {"input_history": history(("human", "x")), "subject": ALICE, "speaker_trust": 1.5},
        {"segments": [], "subject": ALICE},
    ],
)
def test_bad_requests_are_422(internal_client, llm_server, body) -> None:
    answer = post(internal_client, "scoped_history", body)
    assert answer.status_code == 422 and set(answer.json()) == {"detail"}
    assert llm_server.requests == []


def test_a_batch_answers_one_result_per_segment_in_order(internal_client, llm_server) -> None:
    bob = {"subject_kind": "group_participant", "subject_id": "qq:7788:1002"}
    llm_server.script(facts_reply("Alice 下周去东京"), error(500), error(500), error(500))
    segments = [
        {"input_history": history(("human", "我下周去东京")), "subject": ALICE, "speaker_label": "Alice"},
        {"input_history": history(("human", "我喜欢下棋")), "subject": bob, "speaker_label": "Bob"},
    ]
    answer = post(internal_client, "scoped_history", {"segments": segments, "language": "zh"})
    assert answer.status_code == 200
    body = answer.json()
    assert body["status"] == "processed" and [s["status"] for s in body["segments"]] == ["ok", "failed"]
    first, second = body["segments"]
    assert first["subject"]["subject_id"] == "qq:7788:1001" and first["created"] == 1
    assert first["created_fact_identities"] == first["fact_ids"] and first["trust"]["persisted"] is None
    assert second["subject"]["subject_id"] == "qq:7788:1002" and second["fact_ids"] == []
    assert list(Fact.with_subjects.values_list("subject_key", flat=True)) == [
        "group_participant:qq:7788:1001"
    ]


@pytest.mark.parametrize(
    "body",
    [
        {"segments": [{"input_history": history(("human", "x")), "subject": ALICE}]},  # no speaker_label
        {"segments": []},
        {
            "segments": [{"input_history": history(("human", "x")), "subject": ALICE, "speaker_label": "A"}]
            * 9
        },
        {
            "segments": [
                {"input_history": history(*[("human", "x")] * 101), "subject": ALICE, "speaker_label": "A"}
            ]
            * 2
        },
        {"segments": [], "speaker_label": "A"},
    ],
)
def test_bad_batches_are_422(internal_client, llm_server, body) -> None:
    answer = post(internal_client, "scoped_history", body)
    assert answer.status_code == 422 and set(answer.json()) == {"detail"}
    assert llm_server.requests == []
