"""LangChain message types the prompts do not render (tool, function, chat): kept, never shown."""

from __future__ import annotations

import json

import pytest

from recent.models import RawMessage, RecentMessage

pytestmark = pytest.mark.django_db

TOOL_TEXT = "weather_api: {'city': 'Hangzhou', 'temp': 31}"


def turn(kind: str) -> list[dict]:
    return [
        {"type": "human", "data": {"content": "杭州今天热吗？"}},
        {"type": "ai", "data": {"content": "", "tool_calls": [{"name": "weather", "args": {}, "id": "c1"}]}},
        {"type": kind, "data": {"content": TOOL_TEXT, "tool_call_id": "c1", "name": "weather"}},
        {"type": "ai", "data": {"content": "三十一度，很热呢。"}},
    ]


def post(client, route: str, messages: list[dict]):
    body = json.dumps({"input_history": json.dumps(messages, ensure_ascii=False)})
    return client.post(f"/{route}/小天", data=body, content_type="application/json")


@pytest.mark.parametrize("kind", ["tool", "function", "chat", "ToolMessage"])
def test_a_tool_message_no_longer_rejects_the_turn(client, kind):
    response = post(client, "cache", turn(kind))
    assert response.json() == {"status": "cached", "count": 4}
    raw = [json.loads(row.message) for row in RawMessage.objects.order_by("id")]
    assert [m["type"] for m in raw] == ["human", "ai", kind.lower().removesuffix("message"), "ai"]
    assert raw[2]["data"]["content"] == TOOL_TEXT
    assert raw[2]["data"]["tool_call_id"] == "c1"


@pytest.mark.parametrize("route", ["cache", "process", "renew"])
def test_tool_messages_stay_out_of_the_window_and_every_prompt(client, route, llm_server):
    llm_server.allow_unexpected = True  # compression may or may not be asked for
    post(client, route, turn("tool"))
    assert list(RecentMessage.objects.values_list("type", flat=True)) == ["human", "ai", "ai"]
    assert TOOL_TEXT not in client.get("/new_dialog/小天").content.decode()
    assert TOOL_TEXT not in client.get("/get_recent_history/小天").content.decode()
    assert all(TOOL_TEXT not in json.dumps(r.json, ensure_ascii=False) for r in llm_server.requests)


def test_a_turn_of_tool_messages_only_is_journalled_without_touching_the_window(client):
    response = post(client, "cache", [{"type": "tool", "data": {"content": TOOL_TEXT}}])
    assert response.json() == {"status": "cached", "count": 1}
    assert RawMessage.objects.count() == 1
    assert RecentMessage.objects.count() == 0
