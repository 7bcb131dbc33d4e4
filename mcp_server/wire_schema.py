"""The MCP endpoint (``/mcp/{name}``) in the OpenAPI schema (registered with nekomem/wire_schema.py).

The endpoint speaks JSON-RPC (the MCP streamable HTTP transport, stateless, JSON answers); the
schema names the route and its envelope, the tools themselves are listed by ``tools/list``."""

from __future__ import annotations

from nekomem.wire_schema import ERRORS, Json, json_response, operation, register

COMPONENTS: dict[str, Json] = {
    "JsonRpcMessage": {
        "type": "object",
        "description": "One JSON-RPC 2.0 message: {jsonrpc: '2.0', id?, method, params?}.",
        "properties": {
            "jsonrpc": {"type": "string", "enum": ["2.0"]},
            "method": {"type": "string"},
            "params": {"type": "object"},
        },
        "required": ["jsonrpc", "method"],
    },
}

PATHS: dict[str, Json] = {
    "/mcp/{name}": {
        "post": {
            **operation(
                "mcp_message",
                "MCP streamable HTTP endpoint of one character (POST only; the client must accept "
                "application/json and text/event-stream): initialize, tools/list, tools/call, …",
                {
                    "200": json_response("WireObject", "the JSON-RPC answer"),
                    "202": {"description": "a notification, accepted"},
                    **ERRORS,
                    "406": json_response("WireObject", "the Accept header leaves out application/json"),
                },
                body="JsonRpcMessage",
                tag="MCP",
            ),
        }
    },
}

register(__name__, paths=PATHS, components=COMPONENTS)
