"""``/mcp/{name}`` through Django's whole stack: the bridge answers JSON-RPC, and the checks every
route passes (Host, Origin, content type, the bearer token off loopback) hold for it too."""

from __future__ import annotations

import json
from typing import Any

import pytest

from recent.models import RawMessage

pytestmark = pytest.mark.django_db

# What the SDK's client sends on a stateless, pre-2026 connection.
MCP_HEADERS = {"accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
REMOTE = {"REMOTE_ADDR": "192.0.2.10"}


def rpc(method: str, params: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})


REMEMBER = rpc(
    "tools/call",
    {"name": "remember", "arguments": {"messages": [{"role": "user", "content": "我养了一只橘猫"}]}},
)


def post(client, body: str, *, name: str = "小天", content_type: str = "application/json", **extra):
    return client.post(f"/mcp/{name}", data=body, content_type=content_type, headers=MCP_HEADERS, **extra)


def test_tools_are_listed_and_called_over_http(client) -> None:
    listed = post(client, rpc("tools/list", {}))
    assert listed.status_code == 200 and listed["Content-Type"] == "application/json"
    assert "forget_everything_about" in {tool["name"] for tool in listed.json()["result"]["tools"]}

    called = post(client, REMEMBER)
    assert called.status_code == 200
    assert called.json()["result"]["structuredContent"] == {"stored": 1, "character": "小天"}
    assert list(RawMessage.objects.values_list("character__name", flat=True)) == ["小天"]


def test_bad_arguments_over_http_are_a_tool_error_not_a_server_error(client) -> None:
    answer = post(client, rpc("tools/call", {"name": "recall", "arguments": {"limit": "all"}}))
    assert answer.status_code == 200
    assert answer.json()["result"]["isError"] is True


def test_an_invalid_character_name_is_400(client) -> None:
    answer = post(client, rpc("tools/list", {}), name="..%2Fetc")
    assert answer.status_code == 400 and answer.json()["error_code"] == "invalid_character_name"


@pytest.mark.parametrize(
    "headers",
    [
        {"HTTP_ORIGIN": "http://evil.example"},
        {"HTTP_SEC_FETCH_SITE": "cross-site", "HTTP_SEC_FETCH_MODE": "cors"},
    ],
)
def test_a_cross_site_request_is_refused_and_stores_nothing(client, headers: dict[str, str]) -> None:
    answer = post(client, REMEMBER, **headers)
    assert answer.status_code == 403 and answer.json()["error_code"] == "cross_site_request"
    assert not RawMessage.objects.exists()


def test_a_rebound_host_is_refused(client) -> None:
    answer = post(client, REMEMBER, HTTP_HOST="evil.example:48912")
    assert answer.status_code == 400 and answer.json()["error_code"] == "disallowed_host"
    assert not RawMessage.objects.exists()


def test_a_body_that_is_not_json_is_415(client) -> None:
    answer = post(client, REMEMBER, content_type="text/plain")
    assert answer.status_code == 415
    assert not RawMessage.objects.exists()


def test_off_loopback_the_bearer_token_is_needed(client, settings) -> None:
    settings.NEKOMEM_API_TOKEN = "s3cret-token"
    assert post(client, REMEMBER, **REMOTE).status_code == 401
    assert not RawMessage.objects.exists()
    answer = post(client, REMEMBER, HTTP_AUTHORIZATION="Bearer s3cret-token", **REMOTE)
    assert answer.status_code == 200 and answer.json()["result"]["isError"] is False


@pytest.mark.parametrize("method", ["get", "delete"])
def test_only_post_is_served(client, method: str) -> None:
    answer = getattr(client, method)("/mcp/小天", headers=MCP_HEADERS)
    assert answer.status_code == 405 and answer["Allow"] == "POST"
    assert answer.json()["error_code"] == "method_not_allowed"
