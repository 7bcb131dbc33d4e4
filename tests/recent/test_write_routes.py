"""Wire shapes of the conversation routes, with turns from the fixture conversations."""

from __future__ import annotations

import json

import pytest

from nekomem.journal.models import OutboxOp
from recent.models import RawMessage, RecentMessage
from tests.support.dataset import as_messages, conversation, long_english_chat

pytestmark = pytest.mark.django_db


def post(client, route: str, name: str, messages: list[dict], **extra):
    body = {"input_history": json.dumps(messages, ensure_ascii=False), **extra}
    return client.post(f"/{route}/{name}", data=json.dumps(body), content_type="application/json")


def store_counts(name: str) -> tuple[int, int, int]:
    return (
        RecentMessage.objects.filter(character__name=name).count(),
        RawMessage.objects.filter(character__name=name).count(),
        OutboxOp.objects.filter(character__name=name).count(),
    )


def test_cache_appends_window_raw_log_and_outbox_from_a_real_conversation(client):
    turns = conversation("memorybank-cn")[:6]
    response = post(client, "cache", "小天", as_messages(turns), language="zh-CN")

    assert response.status_code == 200
    assert response.json() == {"status": "cached", "count": 6}
    window = list(RecentMessage.objects.filter(character__name="小天").order_by("position"))
    assert [m.data["content"] for m in window] == [t["text"] for t in turns]
    assert [m.type for m in window] == ["human" if t["role"] == "user" else "ai" for t in turns]
    raw = list(RawMessage.objects.filter(character__name="小天").order_by("id"))
    assert len(raw) == 6
    assert len({r.session_id for r in raw}) == 1 and len({r.timestamp for r in raw}) == 1
    assert json.loads(raw[0].message)["data"]["content"] == turns[0]["text"]
    op = OutboxOp.objects.get(character__name="小天")
    assert op.type == "extract_facts"
    assert op.payload["language"] == "zh-CN"
    assert [m["data"]["content"] for m in op.payload["messages"]] == [t["text"] for t in turns]


def test_each_call_gets_its_own_session_id(client):
    turns = conversation("memorybank-en")[:4]
    post(client, "cache", "Tian", as_messages(turns[:2]))
    post(client, "cache", "Tian", as_messages(turns[2:]))
    assert RawMessage.objects.filter(character__name="Tian").values("session_id").distinct().count() == 2
    window = RecentMessage.objects.filter(character__name="Tian").order_by("position")
    assert [m.data["content"] for m in window] == [t["text"] for t in turns]


def test_empty_history_is_cached_with_count_zero_and_writes_nothing(client):
    response = post(client, "cache", "小天", [])
    assert response.json() == {"status": "cached", "count": 0}
    assert store_counts("小天") == (0, 0, 0)


@pytest.mark.parametrize(
    ("route", "expected"),
    [("process", {"status": "processed"}), ("renew", {"status": "processed"})],
)
def test_process_and_renew_record_the_turn(client, route, expected):
    turns = long_english_chat()[:2]
    response = post(client, route, "Mel", as_messages(turns))
    assert response.json() == expected
    assert store_counts("Mel") == (2, 2, 1)


def test_settle_journals_given_messages_without_duplicating_the_window(client):
    turns = long_english_chat()[:2]
    post(client, "cache", "Mel", as_messages(turns))
    response = post(client, "settle", "Mel", [])
    assert response.json() == {"status": "settled"}
    assert store_counts("Mel") == (2, 2, 1)
    post(client, "settle", "Mel", as_messages(turns[:1]))
    assert store_counts("Mel") == (2, 3, 2)


def test_multimodal_content_and_role_aliases_are_accepted(client):
    messages: list[dict] = [
        {"type": "human", "data": {"content": [{"type": "text", "text": "看这张图"}, {"type": "image_url"}]}},
        {"role": "assistant", "content": "好可爱的猫！"},
    ]
    response = post(client, "cache", "小天", messages)
    assert response.json() == {"status": "cached", "count": 2}
    window = list(RecentMessage.objects.filter(character__name="小天").order_by("position"))
    assert window[1].type == "ai" and window[1].data["tool_calls"] == []


@pytest.mark.parametrize(
    "input_history",
    [
        "not json",
        json.dumps({"type": "human"}),
        json.dumps([{"type": "robot", "data": {"content": "hi"}}]),
        json.dumps([{"type": "human", "data": {}}]),
        json.dumps([{"type": "human", "data": {"content": 42}}]),
    ],
)
def test_bad_history_answers_the_original_error_and_writes_nothing(client, input_history):
    post(client, "cache", "小天", [{"type": "human", "data": {"content": "已有的一句"}}])
    before = store_counts("小天")
    body = json.dumps({"input_history": input_history})
    response = client.post("/cache/小天", data=body, content_type="application/json")
    assert response.status_code == 200
    assert response.json()["status"] == "error" and response.json()["message"]
    assert store_counts("小天") == before


@pytest.mark.parametrize(
    "body",
    ["{not json", json.dumps({"language": "zh"}), json.dumps({"input_history": ["a list, not a string"]})],
)
def test_malformed_request_body_is_422_with_json_error(client, body):
    response = client.post("/cache/小天", data=body, content_type="application/json")
    assert response.status_code == 422
    assert response.json()["status"] == "error"
    assert store_counts("小天") == (0, 0, 0)


def test_get_on_a_write_route_is_405(client):
    assert client.get("/cache/小天").status_code == 405
