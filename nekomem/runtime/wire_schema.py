"""The runtime's wire routes (health, lifecycle, restricted mode) in the OpenAPI schema."""

from __future__ import annotations

from nekomem.wire_schema import Json, json_response, operation, register

COMPONENTS: dict[str, Json] = {
    "LifecycleAnswer": {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "additionalProperties": True,
    },
}

PATHS: dict[str, Json] = {
    "/health": {
        "get": operation(
            "wire_health",
            "Signed health payload",
            {"200": json_response("LifecycleAnswer", "health")},
            parameters=[],
        )
    },
    "/shutdown": {
        "post": operation(
            "wire_shutdown",
            "Stop the server (when NEKOMEM_ALLOW_SHUTDOWN)",
            {"200": json_response("LifecycleAnswer", "stopping")},
            parameters=[],
            secret=True,
        )
    },
    "/reload": {
        "post": operation(
            "wire_reload",
            "Every worker drops its caches before its next request",
            {
                "200": json_response("LifecycleAnswer", "reloaded"),
                "422": json_response("WireError", "bad body"),
            },
            body="LifecycleAnswer",
            body_required=False,
            parameters=[],
            secret=True,
        )
    },
    "/release_character/{name}": {
        "post": operation(
            "wire_release_character",
            "Before a rename or delete: cancel the character's derived background work",
            {
                "200": json_response(
                    "LifecycleAnswer", "{status: success, character_name, cancelled_derived_tasks}"
                ),
                "400": json_response(
                    "LifecycleAnswer", "{status: error, character_name, message}: invalid name"
                ),
                "409": json_response("Blocked", "storage not ready (restricted mode)"),
            },
        )
    },
    "/internal/storage/startup/block": {
        "post": operation(
            "wire_storage_block",
            "Enter restricted mode",
            {
                "200": json_response("LifecycleAnswer", "blocked"),
                "422": json_response("WireError", "bad body"),
            },
            body="LifecycleAnswer",
            body_required=False,
            parameters=[],
            secret=True,
        )
    },
    "/internal/storage/startup/continue": {
        "post": operation(
            "wire_storage_continue",
            "Leave restricted mode",
            {
                "200": json_response("LifecycleAnswer", "released"),
                "409": json_response("Blocked", "still blocked"),
            },
            parameters=[],
            secret=True,
        )
    },
}

register(__name__, paths=PATHS, components=COMPONENTS)
