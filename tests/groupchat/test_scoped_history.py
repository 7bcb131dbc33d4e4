"""``scoped_history``, single shape (reference §1.6): extraction through the loopback LLM."""

from __future__ import annotations

from typing import Any

import pytest

from facts.models import Fact
from tests.conftest import history
from tests.groupchat.test_scoped_routes import ALICE, GROUP, post
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


def batch_reply(*segments: tuple[int, list[str]]) -> Any:
    return json_content(
        {
            "segments": [
                {
                    "segment": number,
                    "facts": [
                        {"text": t, "importance": 6, "entity": "master", "event_when": None} for t in texts
                    ],
                }
                for number, texts in segments
            ]
        }
    )


BOB = {"subject_kind": "group_participant", "subject_id": "qq:7788:1002"}
CAROL = {"subject_kind": "group_participant", "subject_id": "qq:7788:1003"}


def test_a_batch_answers_one_result_per_segment_in_order(internal_client, llm_server) -> None:
    # One call covers the batch; the model answered segment 1 and skipped segment 2.
    llm_server.script(batch_reply((1, ["Alice 下周去东京"])))
    segments = [
        {"input_history": history(("human", "我下周去东京")), "subject": ALICE, "speaker_label": "Alice"},
        {"input_history": history(("human", "我喜欢下棋")), "subject": BOB, "speaker_label": "Bob"},
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
    assert len(llm_server.requests) == 1


def test_one_call_covers_every_segment_and_each_fact_goes_to_its_own_subject(
    internal_client, llm_server
) -> None:
    llm_server.script(
        batch_reply((3, ["Carol 是护士"]), (1, ["Alice 下周去东京"]), (2, []), (9, ["不存在的段"]))
    )
    segments = [
        {"input_history": history(("human", "我下周去东京")), "subject": ALICE, "speaker_label": "Alice"},
        {"input_history": history(("human", "哈哈")), "subject": BOB, "speaker_label": "Bob"},
        {"input_history": history(("human", "我在医院上夜班")), "subject": CAROL, "speaker_label": "Carol"},
    ]
    answer = post(internal_client, "scoped_history", {"segments": segments, "language": "zh"})
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert [s["status"] for s in body["segments"]] == ["ok", "ok", "ok"]
    assert [s["created"] for s in body["segments"]] == [1, 0, 1]
    assert [s["subject"]["subject_id"] for s in body["segments"]] == [
        "qq:7788:1001",
        "qq:7788:1002",
        "qq:7788:1003",
    ]
    stored = dict(Fact.with_subjects.values_list("text", "subject_key"))
    assert stored == {
        "Alice 下周去东京": "group_participant:qq:7788:1001",
        "Carol 是护士": "group_participant:qq:7788:1003",
    }
    # one request, whose prompt labels every segment with its speaker, in request order
    assert len(llm_server.requests) == 1
    prompt = llm_server.bodies[0]["messages"][1]["content"]
    positions = [
        prompt.index(f"[第{i}段] 说话人：{who}") for i, who in ((1, "Alice"), (2, "Bob"), (3, "Carol"))
    ]
    assert positions == sorted(positions)
    assert (
        prompt.index("我下周去东京")
        < positions[1]
        < prompt.index("哈哈")
        < positions[2]
        < prompt.index("上夜班")
    )
    assert "3" in llm_server.bodies[0]["messages"][0]["content"]


@pytest.mark.parametrize(
    ("language", "said", "header"),
    [
        ("en", "I start a new job next week", "[segment 1] speaker: Alice"),
        ("ja", "来週から新しい仕事が始まります", "[区切り1] 話し手：Alice"),
        ("ru", "На следующей неделе я начинаю новую работу", "[фрагмент 1] говорящий: Alice"),
    ],
)
def test_the_batch_prompt_follows_the_language(internal_client, llm_server, language, said, header) -> None:
    llm_server.script(batch_reply((1, []), (2, [])))
    segments = [
        {"input_history": history(("human", said)), "subject": ALICE, "speaker_label": "Alice"},
        {"input_history": history(("human", said)), "subject": BOB, "speaker_label": "Bob"},
    ]
    answer = post(internal_client, "scoped_history", {"segments": segments, "language": language})
    assert [s["status"] for s in answer.json()["segments"]] == ["ok", "ok"]
    assert header in llm_server.bodies[0]["messages"][1]["content"]


def test_a_failed_batch_call_is_502_and_stores_nothing(internal_client, llm_server) -> None:
    llm_server.script(error(500), error(500), error(500))
    segments = [
        {"input_history": history(("human", "我下周去东京")), "subject": ALICE, "speaker_label": "Alice"},
        {"input_history": history(("human", "我喜欢下棋")), "subject": BOB, "speaker_label": "Bob"},
    ]
    answer = post(internal_client, "scoped_history", {"segments": segments})
    assert answer.status_code == 502 and answer.json() == {
        "detail": "scoped fact extraction failed; retry later"
    }
    assert not Fact.with_subjects.exists()
    # an answer without a segments list is no answer either
    llm_server.script(json_content({"facts": []}))
    assert post(internal_client, "scoped_history", {"segments": segments}).status_code == 502


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
