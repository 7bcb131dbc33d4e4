"""The memory-server (wire) routes in the OpenAPI schema, next to the /api/v1 API.

The wire routes are plain Django views, wire-compatible with the original server, so drf-spectacular
does not see them. Each app that serves such routes describes them in its own ``<app>/wire_schema.py``
(beside its ``urls.py``) and registers the fragment with :func:`register`; this module holds the shared
pieces and assembles the fragments into the schema with a postprocessing hook. The kernel imports no
app: the fragments are found the way Django finds ``admin.py`` (``autodiscover_modules``).
Shapes follow spec/reference-behaviour.md §1: most conversation routes answer 200 even on failure.
"""

from __future__ import annotations

from typing import Any

from django.utils.module_loading import autodiscover_modules

Json = dict[str, Any]

WIRE_TAG = "memory server (wire)"

NAME_PARAMETER: Json = {
    "name": "name",
    "in": "path",
    "required": True,
    "description": "Character name (1-64 characters, no path separators or control characters).",
    "schema": {"type": "string"},
}
LANGUAGE_QUERY: Json = {"name": "language", "in": "query", "required": False, "schema": {"type": "string"}}

# The components every fragment may refer to; a fragment adds its own through ``register``.
SHARED_COMPONENTS: dict[str, Json] = {
    "WireObject": {"type": "object", "description": "A JSON object; its keys are listed in the summary."},
    "WireError": {
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["error"]},
            "message": {"type": "string"},
            "error_code": {"type": "string"},
        },
        "required": ["status", "message"],
    },
    "Blocked": {
        "type": "object",
        "properties": {
            "ok": {"type": "boolean"},
            "error_code": {"type": "string"},
            "blocking_reason": {"type": "string"},
            "limited_mode": {"type": "boolean"},
            "error": {"type": "string"},
        },
        "required": ["ok", "error_code", "limited_mode"],
    },
}


def ref(name: str) -> Json:
    return {"$ref": f"#/components/schemas/{name}"}


def json_response(name: str, description: str) -> Json:
    return {"description": description, "content": {"application/json": {"schema": ref(name)}}}


TEXT: Json = {"description": "plain text", "content": {"text/plain": {"schema": {"type": "string"}}}}
HTML: Json = {"description": "an HTML page", "content": {"text/html": {"schema": {"type": "string"}}}}
ERRORS: dict[str, Json] = {
    "400": json_response("WireError", "invalid character name"),
    "409": json_response("Blocked", "storage not ready (restricted mode)"),
    "413": json_response("WireError", "body over NEKOMEM_MAX_BODY_BYTES"),
    "415": json_response("WireError", "body is not application/json"),
}
BODY_ERRORS: dict[str, Json] = {
    **ERRORS,
    "422": json_response("WireError", "the body is not what the route takes"),
}


def operation(
    operation_id: str,
    summary: str,
    responses: dict[str, Json],
    *,
    body: str | None = None,
    body_required: bool = True,
    parameters: list[Json] | None = None,
    secret: bool = False,
    tag: str = WIRE_TAG,
) -> Json:
    """One OpenAPI operation; ``secret`` routes take the internal bearer token (401/403 without it)."""
    built: Json = {
        "operationId": operation_id,
        "summary": summary,
        "tags": [tag],
        "parameters": parameters if parameters is not None else [NAME_PARAMETER],
        "responses": responses,
    }
    if body is not None:
        built["requestBody"] = {
            "required": body_required,
            "content": {"application/json": {"schema": ref(body)}},
        }
    if secret:
        built["security"] = [{"internalBearer": []}]
        built["responses"] = {
            **responses,
            "401": json_response("WireError", "missing or wrong bearer token"),
            "403": json_response("WireError", "forbidden"),
        }
    return built


# --- the registry ------------------------------------------------------------------------------------

_paths: dict[str, dict[str, Json]] = {}  # fragment module -> its paths
_components: dict[str, dict[str, Json]] = {}


class DuplicateWirePath(ValueError):
    """Two fragments describe the same path: one of them documents a route it does not serve."""


def register(fragment: str, *, paths: dict[str, Json], components: dict[str, Json] | None = None) -> None:
    """Called once by each fragment module (``register(__name__, paths=…)``); importing it again
    replaces its own entry instead of adding a second one."""
    for path in paths:
        owner = next((name for name, known in _paths.items() if path in known and name != fragment), None)
        if owner is not None:
            raise DuplicateWirePath(f"{path} is described by both {owner} and {fragment}")
    _paths[fragment] = dict(paths)
    _components[fragment] = dict(components or {})


def wire_paths() -> dict[str, Json]:
    """Every registered fragment's paths (the apps' ``wire_schema`` modules are imported first)."""
    autodiscover_modules("wire_schema")
    merged: dict[str, Json] = {}
    for paths in _paths.values():
        merged.update(paths)
    return merged


def wire_components() -> dict[str, Json]:
    autodiscover_modules("wire_schema")
    merged = dict(SHARED_COMPONENTS)
    for components in _components.values():
        merged.update(components)
    return merged


def add_wire_routes(result: Json, generator: Any, request: Any, public: bool) -> Json:
    """drf-spectacular postprocessing hook: the wire routes join the generated schema."""
    result.setdefault("paths", {}).update(wire_paths())
    components = result.setdefault("components", {})
    components.setdefault("schemas", {}).update(wire_components())
    components.setdefault("securitySchemes", {})["internalBearer"] = {
        "type": "http",
        "scheme": "bearer",
        "description": "NEKOMEM_API_TOKEN (or var/api_token)",
    }
    return result
