from __future__ import annotations

import threading

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from mcp.server.mcpserver import MCPServer

from mcp_server.bridge import bridged_response
from mcp_server.server import build_server
from nekomem.http import validated_name

# Building a character's server (its tools' schemas) takes about 50 ms, so each view thread keeps the
# ones it built. Per thread, because each request installs its own transport on the server it uses.
_servers = threading.local()
SERVERS_PER_THREAD = 64


def _server_for(name: str) -> MCPServer:
    built: dict[str, MCPServer] = getattr(_servers, "built", None) or {}
    _servers.built = built
    if name not in built:
        if len(built) >= SERVERS_PER_THREAD:
            built.clear()
        built[name] = build_server(name)
    return built[name]


# Set by Django from the body it sends.
_SKIPPED_HEADERS = frozenset({"content-length", "transfer-encoding", "connection"})


@csrf_exempt
@require_POST  # GET would open the transport's event stream, which a stateless bridge cannot hold
@validated_name
def mcp_endpoint(request: HttpRequest, name: str) -> HttpResponse:
    """``/mcp/{name}``: the MCP streamable HTTP endpoint of one character (POST only: 405 otherwise)."""
    answer = bridged_response(_server_for(name), request)
    response = HttpResponse(bytes(answer.body), status=answer.status)
    for header, value in answer.headers:
        if header.lower() not in _SKIPPED_HEADERS:
            response[header] = value
    return response
