"""The MCP tools through the SDK's own client, connected in-process to one character's server.

The client runs inside ``async_to_sync`` so the tools' database work comes back to the test's thread
(and its transaction), as it comes back to the request's thread behind the HTTP bridge.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar, cast

import pytest
from asgiref.sync import async_to_sync
from django.utils import timezone
from mcp import Client
from mcp.types import CallToolResult

from facts.models import Fact
from mcp_server.server import build_server
from nekomem.characters.models import Character
from persona.models import PersonaEntry
from reflections.models import Reflection
from tests.characters.factories import CharacterFactory
from tests.facts.factories import FactFactory
from tests.persona.factories import make_entry
from tests.reflections.factories import ReflectionFactory

pytestmark = pytest.mark.django_db

T = TypeVar("T")
EXCHANGE = [
    {"role": "user", "content": "我养了一只橘猫，叫团子"},
    {"role": "assistant", "content": "团子这个名字好可爱！"},
]


def with_client(name: str, scenario: Callable[[Client], Awaitable[T]]) -> T:
    async def run() -> T:
        async with Client(build_server(name)) as client:
            return await scenario(client)

    return async_to_sync(run)()


def call(name: str, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    async def scenario(client: Client) -> CallToolResult:
        return await client.call_tool(tool, arguments)

    return with_client(name, scenario)


def structured(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    return result.structured_content


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    return " ".join(getattr(block, "text", "") for block in result.content)


# Bad arguments for every tool: each must come back as a tool error the model can read.
BAD_ARGUMENTS: list[tuple[str, dict[str, Any]]] = [
    ("remember", {}),
    ("remember", {"messages": []}),
    ("remember", {"messages": [{"role": "narrator", "content": "hi"}]}),
    ("remember", {"messages": [{"role": "user"}]}),
    ("remember", {"messages": "user: hi"}),
    ("recall", {"limit": "many"}),
    ("recall", {"limit": 0}),
    ("recall", {"query": 42}),
    ("recall", {}),  # neither a query nor a time
    ("working_context", {"language": ["zh"]}),
    ("list_memories", {"kind": "dream"}),
    ("list_memories", {"limit": 10_000}),
    ("get_memory", {}),
    ("get_memory", {"id": ""}),
    ("update_memory", {"id": "fact_x"}),
    ("update_memory", {"id": "fact_x", "text": ""}),
    ("forget_memory", {"id": None}),
    ("persona", {"language": 7}),
    ("forget_everything_about", {}),
    ("forget_everything_about", {"dry_run": "perhaps"}),
    ("forget_everything_about", {"time": "when the moon turns green"}),
    ("query_public_knowledge", {}),
    ("query_public_knowledge", {"query": ""}),
    ("query_public_knowledge", {"query": "草", "mode": "browse"}),
    ("query_public_knowledge", {"query": "草", "material_type": "memory"}),
    ("query_public_knowledge", {"query": "草", "limit": 11}),
]


def test_every_tool_is_listed_with_an_object_schema() -> None:
    async def scenario(client: Client) -> dict[str, dict[str, Any]]:
        return {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}

    schemas = with_client("小天", scenario)
    assert set(schemas) == {
        "remember",
        "recall",
        "working_context",
        "list_memories",
        "get_memory",
        "update_memory",
        "forget_memory",
        "persona",
        "forget_everything_about",
        "query_public_knowledge",
    }
    assert all(schema["type"] == "object" for schema in schemas.values())
    assert schemas["update_memory"]["required"] == ["id", "text"]
    assert {tool for tool, _ in BAD_ARGUMENTS} == set(schemas)  # every tool is probed below


@pytest.mark.parametrize(("tool", "arguments"), BAD_ARGUMENTS)
def test_bad_arguments_are_a_tool_error_and_change_nothing(tool: str, arguments: dict[str, Any]) -> None:
    character = CharacterFactory(name="小天")
    fact = FactFactory(character=character, text="主人喜欢橘猫")
    result = call("小天", tool, arguments)
    assert error_text(result)
    assert list(Fact.objects.values_list("fact_id", "text")) == [(fact.fact_id, "主人喜欢橘猫")]


def test_remember_stores_the_exchange_as_cache_does_and_recall_finds_it() -> None:
    assert structured(call("小天", "remember", {"messages": EXCHANGE})) == {"stored": 2, "character": "小天"}
    found = structured(call("小天", "recall", {"query": "橘猫团子", "time": "today"}))
    assert found["memories"][0]["text"] == EXCHANGE[0]["content"]
    assert found["memories"][0]["tier"] == "raw_turn"
    assert "bm25" in found["memories"][0]["why"]
    assert found["time_window"] is not None
    context = call("小天", "working_context", {})
    assert "团子这个名字好可爱！" in structured(context)["result"]


def test_a_fact_is_listed_updated_and_forgotten_by_id() -> None:
    character = CharacterFactory(name="小天")
    fact = FactFactory(character=character, text="主人每天早上喝冰美式")
    listed = structured(call("小天", "list_memories", {"kind": "fact"}))["memories"]
    assert [(m["id"], m["text"]) for m in listed] == [(fact.fact_id, "主人每天早上喝冰美式")]

    updated = structured(call("小天", "update_memory", {"id": fact.fact_id, "text": "主人每天早上喝热拿铁"}))
    assert updated["text"] == "主人每天早上喝热拿铁"
    assert structured(call("小天", "get_memory", {"id": fact.fact_id}))["text"] == "主人每天早上喝热拿铁"

    assert structured(call("小天", "forget_memory", {"id": fact.fact_id})) == {
        "forgotten": fact.fact_id,
        "kind": "fact",
    }
    assert not Fact.objects.filter(fact_id=fact.fact_id).exists()
    assert "没有 id" in error_text(call("小天", "get_memory", {"id": fact.fact_id}))


def test_card_entries_are_read_only_and_manual_ones_editable() -> None:
    character = CharacterFactory(name="小天", language="en")
    card = make_entry(character=character, text="Xiaotian is a cat girl", protected=True, source="card")
    manual = make_entry(character=character, text="The master collects stamps")
    assert "character card" in error_text(call("小天", "update_memory", {"id": card.entry_id, "text": "x"}))
    assert "character card" in error_text(call("小天", "forget_memory", {"id": card.entry_id}))
    assert PersonaEntry.objects.get(pk=card.pk).text == "Xiaotian is a cat girl"

    edited = structured(
        call("小天", "update_memory", {"id": manual.entry_id, "text": "The master collects coins"})
    )
    assert edited == {**edited, "kind": "persona", "text": "The master collects coins", "editable": True}
    assert "The master collects coins" in structured(call("小天", "persona", {}))["result"]


def test_a_reflection_is_edited_and_forgetting_it_archives_it() -> None:
    character = CharacterFactory(name="小天")
    reflection = cast(Reflection, ReflectionFactory(character=character, text="主人似乎很喜欢爬山"))
    call("小天", "update_memory", {"id": reflection.reflection_id, "text": "主人似乎很喜欢徒步"})
    structured(call("小天", "forget_memory", {"id": reflection.reflection_id}))
    reflection.refresh_from_db()
    assert reflection.text == "主人似乎很喜欢徒步"
    assert reflection.archive_shard_path
    assert structured(call("小天", "list_memories", {"kind": "reflection"}))["memories"] == []


def test_forget_everything_about_a_subject_and_a_time_range() -> None:
    character = CharacterFactory(name="小天")
    old = timezone.now() - timedelta(days=400)
    cat = FactFactory(character=character, text="主人养了一只橘猫")
    old_cat = FactFactory(character=character, text="主人小时候也养过橘猫", created_at=old)
    coffee = FactFactory(character=character, text="主人喜欢喝咖啡")
    reflection = cast(
        Reflection,
        ReflectionFactory(character=character, text="主人很爱橘猫", status=Reflection.Status.CONFIRMED),
    )

    preview = structured(call("小天", "forget_everything_about", {"subject": "橘猫", "dry_run": True}))
    assert {m["id"] for m in preview["forgotten"]} == {cat.fact_id, old_cat.fact_id, reflection.reflection_id}
    assert Fact.objects.count() == 3  # a dry run changes nothing

    done = structured(call("小天", "forget_everything_about", {"subject": "橘猫", "time": "今年"}))
    assert {m["id"] for m in done["forgotten"]} == {cat.fact_id, reflection.reflection_id}
    assert set(Fact.objects.values_list("fact_id", flat=True)) == {old_cat.fact_id, coffee.fact_id}
    reflection.refresh_from_db()
    assert reflection.archive_shard_path


def test_one_characters_connection_sees_nothing_of_anothers() -> None:
    other = CharacterFactory(name="小黑")
    fact = FactFactory(character=other, text="主人养了一只橘猫")
    call("小黑", "remember", {"messages": EXCHANGE})
    assert structured(call("小天", "list_memories", {}))["memories"] == []
    assert structured(call("小天", "recall", {"query": "橘猫团子"}))["memories"] == []
    assert error_text(call("小天", "get_memory", {"id": fact.fact_id}))
    assert error_text(call("小天", "forget_memory", {"id": fact.fact_id}))
    assert Fact.objects.filter(fact_id=fact.fact_id).exists()


def test_resources_are_the_persona_and_the_recent_window() -> None:
    call("小天", "remember", {"messages": EXCHANGE})
    make_entry(character=Character.objects.get(name="小天"), text="主人收藏了很多邮票")

    async def scenario(client: Client) -> tuple[set[str], str, str]:
        listed = {str(r.uri) for r in (await client.list_resources()).resources}
        recent = (await client.read_resource("nekomem://recent")).contents[0]
        persona = (await client.read_resource("nekomem://persona")).contents[0]
        return listed, getattr(recent, "text", ""), getattr(persona, "text", "")

    listed, recent, persona = with_client("小天", scenario)
    assert listed == {"nekomem://persona", "nekomem://recent"}
    assert "小天 | 团子这个名字好可爱！" in recent
    assert "主人收藏了很多邮票" in persona
