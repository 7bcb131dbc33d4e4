"""The MCP server as a client meets it: the SDK's own client against ``manage.py serve`` (streamable
HTTP at ``/mcp/{name}``) and against ``manage.py mcp --character NAME`` (stdio), on one database."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from tests.e2e.recall_servers import CHARACTER, FACTS, write_facts
from tests.support.server_process import REPO_ROOT, ServerProcess, postgres_base_url, server_backend

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

EXCHANGES = [
    [
        {"role": "user", "content": "今天我去海边看了日出"},
        {"role": "assistant", "content": "海边的日出一定很美！"},
    ],
    [
        {"role": "user", "content": "晚上我做了番茄炒蛋"},
        {"role": "assistant", "content": "番茄炒蛋是经典的家常菜呢"},
    ],
]


def texts(exchange: list[dict[str, str]]) -> set[str]:
    return {message["content"] for message in exchange}


def data(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    return result.structured_content


def recalled(result: CallToolResult) -> list[str]:
    return [memory["text"] for memory in data(result)["memories"]]


async def memory_session(client: Client) -> dict[str, Any]:
    """The issue's walk through every tool; returns what the test checks afterwards."""
    seen: dict[str, Any] = {"tools": {tool.name for tool in (await client.list_tools()).tools}}
    for exchange in EXCHANGES:
        assert data(await client.call_tool("remember", {"messages": exchange}))["stored"] == 2
    seen["sunrise"] = recalled(await client.call_tool("recall", {"query": "海边日出", "time": "今天"}))
    seen["context"] = data(await client.call_tool("working_context", {}))["result"]

    fact_id, fact_text = FACTS[0]
    assert data(await client.call_tool("get_memory", {"id": fact_id}))["text"] == fact_text
    await client.call_tool("update_memory", {"id": fact_id, "text": "主人养了一只柴犬，名字叫豆豆"})
    seen["after_update"] = recalled(await client.call_tool("recall", {"query": "柴犬豆豆"}))
    data(await client.call_tool("forget_memory", {"id": fact_id}))
    seen["after_forget"] = recalled(await client.call_tool("recall", {"query": "柴犬豆豆"}))

    persona = (await client.read_resource("nekomem://persona")).contents[0]
    recent = (await client.read_resource("nekomem://recent")).contents[0]
    seen["persona_mime"] = persona.mime_type
    seen["recent"] = getattr(recent, "text", "")
    return seen


def check_session(seen: dict[str, Any]) -> None:
    assert len(seen["tools"]) == 10
    assert {"remember", "recall", "forget_everything_about", "query_public_knowledge"} <= seen["tools"]
    assert seen["sunrise"][0] in texts(EXCHANGES[0])
    assert "番茄炒蛋是经典的家常菜呢" in seen["context"]
    assert seen["after_update"][0] == "主人养了一只柴犬，名字叫豆豆"
    assert "主人养了一只柴犬，名字叫豆豆" not in seen["after_forget"]
    assert seen["persona_mime"] == "text/markdown"
    assert "晚上我做了番茄炒蛋" in seen["recent"]


async def stranger_view(client: Client) -> tuple[list[Any], list[str]]:
    listed = data(await client.call_tool("list_memories", {}))["memories"]
    return listed, recalled(await client.call_tool("recall", {"query": "橘猫团子 冰美式 爬山 日出"}))


def cross_site_status(port: int) -> int:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp/{urllib.parse.quote(CHARACTER)}",
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Origin": "https://evil.example",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as refused:
        return refused.code


def started_with_facts(server: ServerProcess, tmp_path: Path) -> None:
    server.extra_env["NEKOMEM_WORKERS"] = "1"
    server.start()
    write_facts(tmp_path / "import")
    server.manage("import_memory", str(tmp_path / "import"))


def test_mcp_over_http_and_over_stdio(tmp_path: Path) -> None:
    with server_backend(
        tmp_path, postgres_url=postgres_base_url(), redis_base_url=os.environ.get("REDIS_URL") or None
    ) as server:
        started_with_facts(server, tmp_path)
        url = f"http://127.0.0.1:{server.port}/mcp/{urllib.parse.quote(CHARACTER)}"

        async def over_http() -> tuple[dict[str, Any], tuple[list[Any], list[str]]]:
            async with Client(url) as client:
                seen = await memory_session(client)
            async with Client(f"http://127.0.0.1:{server.port}/mcp/%E5%B0%8F%E9%BB%91") as stranger:
                return seen, await stranger_view(stranger)

        seen, (stranger_list, stranger_recall) = asyncio.run(over_http())
        check_session(seen)
        assert stranger_list == [] and stranger_recall == []
        assert cross_site_status(server.port) == 403

        # stdio: the command a desktop client or a coding agent spawns, on the same database.
        stdio = StdioServerParameters(
            command=sys.executable,
            args=["manage.py", "mcp", "--character", CHARACTER],
            env=server.env(),
            cwd=str(REPO_ROOT),
        )

        async def over_stdio() -> tuple[set[str], list[str], list[str], str]:
            async with Client(stdio) as client:
                tools = {tool.name for tool in (await client.list_tools()).tools}
                await client.call_tool("remember", {"messages": EXCHANGES[0]})
                found = recalled(await client.call_tool("recall", {"query": "番茄炒蛋", "time": "今天"}))
                fact_id, _ = FACTS[1]
                data(await client.call_tool("forget_memory", {"id": fact_id}))
                after = recalled(await client.call_tool("recall", {"query": "冰美式"}))
                persona = (await client.read_resource("nekomem://persona")).contents[0]
                return tools, found, after, str(persona.uri)

        tools, found, after, persona_uri = asyncio.run(over_stdio())
        assert tools == seen["tools"]
        assert found[0] in texts(EXCHANGES[1])  # remembered over HTTP, recalled over stdio
        assert FACTS[1][1] not in after
        assert persona_uri == "nekomem://persona"
