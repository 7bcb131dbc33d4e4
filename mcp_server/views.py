from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from mcp_server.bridge import bridged_response
from mcp_server.server import build_server
from nekomem.http import validated_name

# Set by Django from the body it sends.
_SKIPPED_HEADERS = frozenset({"content-length", "transfer-encoding", "connection"})


@csrf_exempt
@validated_name
def mcp_endpoint(request: HttpRequest, name: str) -> HttpResponse:
    """``/mcp/{name}``: the MCP streamable HTTP endpoint of one character (POST; GET/DELETE answer 405)."""
    answer = bridged_response(build_server(name), request)
    response = HttpResponse(bytes(answer.body), status=answer.status)
    for header, value in answer.headers:
        if header.lower() not in _SKIPPED_HEADERS:
            response[header] = value
    return response
