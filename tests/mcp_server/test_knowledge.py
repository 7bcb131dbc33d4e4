"""The public knowledge tool through the SDK's own client: the same answer as the chat's route."""

from __future__ import annotations

import json
from typing import Any

import pytest

from knowledge.services import knowledge_enabled_set, knowledge_entry_disabled_set, knowledge_pack_install
from nekomem.characters.models import Character
from tests.knowledge.factories import fixture_pack
from tests.mcp_server.test_http import post, rpc
from tests.mcp_server.test_tools import call, structured

pytestmark = pytest.mark.django_db


@pytest.fixture
def pack() -> dict[str, Any]:
    pack = fixture_pack()
    knowledge_pack_install(raw=json.dumps(pack, ensure_ascii=False).encode())
    return pack


def route_answer(internal_client, **body: Any) -> dict[str, Any]:
    answer = internal_client.post("/internal/knowledge/query", data=body, content_type="application/json")
    assert answer.status_code == 200, answer.content
    payload: dict[str, Any] = answer.json()
    return payload


def test_a_lookup_answers_as_the_chats_route_does(internal_client, pack: dict[str, Any]) -> None:
    entry = pack["entries"][0]
    query = (
        entry.get("terms", {}).get("recognition") or entry.get("terms", {}).get("alias") or [entry["title"]]
    )[0]
    answer = structured(call("小天", "query_public_knowledge", {"query": query, "language": "zh"}))
    route = route_answer(internal_client, query=query, language="zh")
    assert answer["result"] == route["result"] == "matched"
    assert answer["hits"] == route["hits"] and answer["hits"][0]["title"] == entry["title"]
    assert answer["context"] == route["context"] and entry["title"] in answer["context"]
    assert set(answer) == {"result", "context", "hits", "retrieval_mode"}
    # Not memory: the lookup neither creates the character nor stores anything of it.
    assert not Character.objects.filter(name="小天").exists()


def test_a_disabled_entry_and_a_disabled_store_answer_nothing(pack: dict[str, Any]) -> None:
    entry = pack["entries"][0]
    knowledge_entry_disabled_set(pack_id=pack["pack_id"], title=entry["title"], disabled=True)
    answer = structured(call("小天", "query_public_knowledge", {"query": entry["title"], "limit": 1}))
    assert all(hit["title"] != entry["title"] for hit in answer["hits"])
    knowledge_enabled_set(enabled=False)
    answer = structured(call("小天", "query_public_knowledge", {"query": entry["title"]}))
    assert (answer["result"], answer["context"], answer["hits"]) == ("disabled", "", [])


def test_sample_mode_draws_entries_of_a_tag(pack: dict[str, Any]) -> None:
    tag = pack["entries"][0]["tags"][0]
    answer = structured(call("小天", "query_public_knowledge", {"query": tag, "mode": "sample", "limit": 10}))
    tagged = {e["title"] for e in pack["entries"] if tag in e.get("tags", [])}
    assert answer["result"] == "matched" and answer["retrieval_mode"] == "sample"
    assert {hit["title"] for hit in answer["hits"]} == tagged


def test_the_tool_answers_over_http_as_well(client, internal_client, pack: dict[str, Any]) -> None:
    title = pack["entries"][1]["title"]
    body = rpc(
        "tools/call", {"name": "query_public_knowledge", "arguments": {"query": title, "language": "en"}}
    )
    answer = post(client, body)
    assert answer.status_code == 200
    result = answer.json()["result"]["structuredContent"]
    route = route_answer(internal_client, query=title, language="en")
    assert (result["result"], result["hits"], result["context"]) == (
        route["result"],
        route["hits"],
        route["context"],
    )
    assert result["hits"][0]["title"] == title
