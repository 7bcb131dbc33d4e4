"""The recall layer's wire routes in the OpenAPI schema (registered with nekomem/wire_schema.py).

The group-chat and Markdown-import routes, served from ``recall/urls.py`` for now, are described in
their own modules so they can move with their views; importing them here registers them."""

from __future__ import annotations

from nekomem.wire_schema import (
    BODY_ERRORS,
    ERRORS,
    LANGUAGE_QUERY,
    NAME_PARAMETER,
    TEXT,
    Json,
    json_response,
    operation,
    register,
)

COMPONENTS: dict[str, Json] = {
    "RecallRequest": {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "time": {"type": "string"},
            "subjects": {
                "type": "array",
                "description": "group chat: 1..8 subjects ({subject_kind, subject_id, scope?} or the key "
                "<kind>:<subject_id>); only their rows, never private ones. Omitted: private memory only.",
                "items": {"oneOf": [{"type": "string"}, {"type": "object"}]},
                "minItems": 1,
                "maxItems": 8,
            },
            "language": {"type": "string"},
            "config": {"type": "string"},
            "explain": {"type": "boolean"},
        },
    },
    "RecallAnswer": {
        "type": "object",
        "properties": {
            "results": {"type": "array", "items": {"type": "object"}},
            "query": {"type": "string"},
            "time": {"type": "string"},
            "candidates_total": {"type": "integer"},
            "elapsed_ms": {"type": "number"},
            "error_code": {"type": "string"},
        },
        "required": ["results"],
    },
}

PATHS: dict[str, Json] = {
    "/new_dialog/{name}": {
        "get": operation(
            "wire_new_dialog",
            "Memory context for a new LLM session",
            {"200": TEXT, **ERRORS},
            parameters=[NAME_PARAMETER, LANGUAGE_QUERY],
        )
    },
    "/query_memory/{name}": {
        "post": operation(
            "wire_query_memory",
            "Hybrid recall",
            {
                "200": json_response(
                    "RecallAnswer", "results (empty with error_code on an internal failure)"
                ),
                **BODY_ERRORS,
            },
            body="RecallRequest",
            body_required=False,
        )
    },
    "/search_for_memory/{name}/{query}": {
        "get": operation(
            "wire_search_for_memory",
            "Deprecated: placeholder text only",
            {"200": TEXT, **ERRORS},
            parameters=[
                NAME_PARAMETER,
                {"name": "query", "in": "path", "required": True, "schema": {"type": "string"}},
                LANGUAGE_QUERY,
            ],
        )
    },
}

register(__name__, paths=PATHS, components=COMPONENTS)
