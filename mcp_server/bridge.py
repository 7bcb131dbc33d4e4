"""The SDK's streamable HTTP transport, answered from a WSGI view.

``serve`` runs granian as WSGI, which keeps ``/cache`` on its measured fast path (bench/
cache_throughput.py: Django under ASGI ran every sync view through one thread per process). The
transport runs stateless with JSON answers: every MCP message is one POST answered by one JSON body
(or 202 for a notification), so nothing outlives the request and a plain request/response carries it.
Each request gets a fresh event loop (``async_to_sync``) with the transport's task group in it; the
tools' database work comes back to this request's thread (``sync_to_async(thread_sensitive=True)``),
where Django's request cycle looks after its connection.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from asgiref.sync import async_to_sync
from django.http import HttpRequest
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

# Host, Origin, content type and the bearer token are checked by the middleware every route passes
# (nekomem/runtime/middleware.py), with the configured hosts and origins; the SDK's own, narrower
# loopback-only check would refuse a configured host.
_CHECKED_BY_MIDDLEWARE = TransportSecuritySettings(enable_dns_rebinding_protection=False)
# The path the SDK's transport is mounted at; only the session manager sees it.
_TRANSPORT_PATH = "/mcp"


@dataclass
class BridgedResponse:
    status: int = 500
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytearray = field(default_factory=bytearray)


def _scope(request: HttpRequest) -> dict[str, Any]:
    headers = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in request.headers.items()]
    port = int(request.get_port() or 0)
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": _TRANSPORT_PATH,
        "raw_path": _TRANSPORT_PATH.encode(),
        "root_path": "",
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "headers": headers,
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "server": (request.get_host().rsplit(":", 1)[0], port),
    }


async def _serve(server: MCPServer, scope: dict[str, Any], body: bytes) -> BridgedResponse:
    server.streamable_http_app(
        json_response=True, stateless_http=True, transport_security=_CHECKED_BY_MIDDLEWARE
    )
    manager = server.session_manager
    answer = BridgedResponse()
    answered = anyio.Event()
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # the client stays connected until its answer is complete
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer.status = message["status"]
            answer.headers = [
                (k.decode("latin-1"), v.decode("latin-1")) for k, v in message.get("headers", [])
            ]
        elif message["type"] == "http.response.body":
            answer.body += message.get("body", b"")
            if not message.get("more_body", False):
                answered.set()

    async with manager.run():
        await manager.handle_request(scope, receive, send)
    return answer


def bridged_response(server: MCPServer, request: HttpRequest) -> BridgedResponse:
    """Run one MCP HTTP request through ``server``'s stateless transport; returns what it answered."""
    return async_to_sync(_serve)(server, _scope(request), request.body)
