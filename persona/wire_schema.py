"""The persona layer's wire routes in the OpenAPI schema (registered with nekomem/wire_schema.py)."""

from __future__ import annotations

from nekomem.wire_schema import (
    ERRORS,
    LANGUAGE_QUERY,
    NAME_PARAMETER,
    Json,
    json_response,
    operation,
    register,
)

PATHS: dict[str, Json] = {
    "/get_settings/{name}": {
        "get": operation(
            "wire_get_settings",
            "The persona as Markdown (the legacy settings text when it is empty), as a JSON string",
            {
                "200": {
                    "description": "a JSON string",
                    "content": {"application/json": {"schema": {"type": "string"}}},
                },
                **ERRORS,
            },
            parameters=[
                NAME_PARAMETER,
                LANGUAGE_QUERY,
                {"name": "render_language", "in": "query", "required": False, "schema": {"type": "string"}},
            ],
        )
    },
    "/get_persona/{name}": {
        "get": operation(
            "wire_get_persona",
            "The persona in the original persona.json shape ({} for an unknown character)",
            {"200": json_response("WireObject", "persona"), **ERRORS},
        )
    },
    "/internal/memory/reset_confirmed_at": {
        "post": operation(
            "wire_reset_confirmed_at",
            "Restart every confirmed reflection's promotion clock: {ok, count} "
            "({ok: false, error} on failure)",
            {"200": json_response("WireObject", "reset")},
            parameters=[],
            secret=True,
        )
    },
}

register(__name__, paths=PATHS)
