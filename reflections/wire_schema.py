"""The reflections layer's wire routes in the OpenAPI schema (registered with nekomem/wire_schema.py)."""

from __future__ import annotations

from nekomem.wire_schema import ERRORS, NAME_PARAMETER, Json, json_response, operation, register

TIME_QUERY = "ISO-8601; a time without a zone is the server's zone"

PATHS: dict[str, Json] = {
    "/reflect/{name}": {
        "post": operation(
            "wire_reflect",
            "Promote due reflections, then synthesise one from pending facts: "
            "{reflection: {…}|null, auto_transitions}",
            {"200": json_response("WireObject", "the synthesis outcome"), **ERRORS},
        )
    },
    "/followup_topics/{name}": {
        "get": operation(
            "wire_followup_topics",
            "Reflections worth bringing up again: {topics: [reflection, …]}",
            {"200": json_response("WireObject", "topics"), **ERRORS},
        )
    },
    "/record_surfaced/{name}": {
        "post": operation(
            "wire_record_surfaced",
            "Note that {reflection_ids: [str]} were mentioned to the user: {ok}",
            {
                "200": json_response("WireObject", "recorded"),
                **ERRORS,
                "422": json_response("WireError", "reflection_ids must be a list of strings"),
            },
            body="WireObject",
        )
    },
    "/api/memory/funnel/{name}": {
        "get": operation(
            "wire_memory_funnel",
            "How many reflections reached each stage between since and until "
            "(default: the 7 days before until): "
            "{lanlan_name, since, until, counts}",
            {
                "200": json_response("WireObject", "counts"),
                **ERRORS,
                "400": json_response("WireError", "invalid name, invalid_time or invalid_window"),
            },
            parameters=[
                NAME_PARAMETER,
                {
                    "name": "since",
                    "in": "query",
                    "required": False,
                    "description": TIME_QUERY,
                    "schema": {"type": "string"},
                },
                {
                    "name": "until",
                    "in": "query",
                    "required": False,
                    "description": TIME_QUERY,
                    "schema": {"type": "string"},
                },
            ],
        )
    },
}

register(__name__, paths=PATHS)
