"""The memory-server (wire) routes in the OpenAPI schema, next to the /api/v1 API.

The wire routes are plain Django views, wire-compatible with the original server, so drf-spectacular
does not see them; a postprocessing hook adds their description here. Shapes follow
spec/reference-behaviour.md §1: most conversation routes answer 200 even on failure.
"""

from __future__ import annotations

from typing import Any

Json = dict[str, Any]

NAME_PARAMETER: Json = {
    "name": "name",
    "in": "path",
    "required": True,
    "description": "Character name (1-64 characters, no path separators or control characters).",
    "schema": {"type": "string"},
}
LANGUAGE_QUERY: Json = {"name": "language", "in": "query", "required": False, "schema": {"type": "string"}}

COMPONENTS: dict[str, Json] = {
    "WireObject": {"type": "object", "description": "A JSON object; its keys are listed in the summary."},
    "LanguageChoice": {
        "type": "object",
        "properties": {"language": {"type": "string", "description": "zh, zh-TW, en, ja, ko, ru, es, pt"}},
        "required": ["language"],
    },
    "WireError": {
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["error"]},
            "message": {"type": "string"},
            "error_code": {"type": "string"},
        },
        "required": ["status", "message"],
    },
    "HistoryRequest": {
        "type": "object",
        "properties": {
            "input_history": {
                "type": "string",
                "description": "A JSON-encoded list of LangChain message dicts ({type, data: {content}}).",
            },
            "language": {"type": "string"},
        },
        "required": ["input_history"],
    },
    "StatusAnswer": {
        "type": "object",
        "properties": {
            "status": {"type": "string"},
            "count": {"type": "integer"},
            "message": {"type": "string"},
            "compressed": {
                "type": "boolean",
                "description": "/renew only, and only false: the window needed compressing and was not "
                "(a background job retries it)",
            },
            "compression_reason": {
                "type": "string",
                "description": "why /renew did not compress: no_provider:summary, failed:<error type>, moot",
            },
        },
        "required": ["status"],
    },
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
    "Gap": {
        "type": "object",
        "properties": {"gap_seconds": {"type": "number"}, "error": {"type": "string"}},
        "required": ["gap_seconds"],
    },
    "LifecycleAnswer": {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "additionalProperties": True,
    },
}


def _ref(name: str) -> Json:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(name: str, description: str) -> Json:
    return {"description": description, "content": {"application/json": {"schema": _ref(name)}}}


TEXT: Json = {"description": "plain text", "content": {"text/plain": {"schema": {"type": "string"}}}}
ERRORS: dict[str, Json] = {
    "400": _json("WireError", "invalid character name"),
    "409": _json("Blocked", "storage not ready (restricted mode)"),
    "413": _json("WireError", "body over NEKOMEM_MAX_BODY_BYTES"),
    "415": _json("WireError", "body is not application/json"),
}
BODY_ERRORS: dict[str, Json] = {**ERRORS, "422": _json("WireError", "the body is not what the route takes")}


def _operation(
    operation_id: str,
    summary: str,
    responses: dict[str, Json],
    *,
    body: str | None = None,
    body_required: bool = True,
    parameters: list[Json] | None = None,
    secret: bool = False,
) -> Json:
    operation: Json = {
        "operationId": operation_id,
        "summary": summary,
        "tags": ["memory server (wire)"],
        "parameters": parameters if parameters is not None else [NAME_PARAMETER],
        "responses": responses,
    }
    if body is not None:
        operation["requestBody"] = {
            "required": body_required,
            "content": {"application/json": {"schema": _ref(body)}},
        }
    if secret:
        operation["security"] = [{"internalBearer": []}]
        operation["responses"] = {
            **responses,
            "401": _json("WireError", "missing or wrong bearer token"),
            "403": _json("WireError", "forbidden"),
        }
    return operation


def _turn_route(operation_id: str, summary: str, *, body_required: bool = True) -> Json:
    return {
        "post": _operation(
            operation_id,
            summary,
            {"200": _json("StatusAnswer", "done, or {status: error, message} on failure"), **BODY_ERRORS},
            body="HistoryRequest",
            body_required=body_required,
        )
    }


WIRE_PATHS: dict[str, Json] = {
    "/cache/{name}": _turn_route("wire_cache", "Store one turn, no LLM call"),
    "/process/{name}": _turn_route("wire_process", "Store one turn and compress in the background"),
    "/renew/{name}": _turn_route("wire_renew", "Store one turn and compress before answering"),
    "/settle/{name}": _turn_route("wire_settle", "Finish the session's work", body_required=False),
    "/new_dialog/{name}": {
        "get": _operation(
            "wire_new_dialog",
            "Memory context for a new LLM session",
            {"200": TEXT, **ERRORS},
            parameters=[NAME_PARAMETER, LANGUAGE_QUERY],
        )
    },
    "/query_memory/{name}": {
        "post": _operation(
            "wire_query_memory",
            "Hybrid recall",
            {
                "200": _json("RecallAnswer", "results (empty with error_code on an internal failure)"),
                **BODY_ERRORS,
            },
            body="RecallRequest",
            body_required=False,
        )
    },
    "/get_recent_history/{name}": {
        "get": _operation(
            "wire_get_recent_history",
            "Recent window as a transcript",
            {"200": TEXT, **ERRORS},
            parameters=[NAME_PARAMETER, LANGUAGE_QUERY],
        )
    },
    "/last_conversation_gap/{name}": {
        "get": _operation(
            "wire_last_conversation_gap",
            "Seconds since the last stored message (-1: none)",
            {"200": _json("Gap", "gap"), "500": _json("Gap", "server error"), **ERRORS},
        )
    },
    "/cancel_correction/{name}": {
        "post": _operation(
            "wire_cancel_correction",
            "Cancel the history review in flight",
            {"200": _json("StatusAnswer", "cancelled or no_task"), **ERRORS},
        )
    },
    "/search_for_memory/{name}/{query}": {
        "get": _operation(
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
    "/prompt-locale/{name}": {
        "get": _operation(
            "wire_prompt_locale_get",
            "The character's durable language: {success, language|null, order, effective_language}",
            {"200": _json("WireObject", "the stored choice"), **ERRORS},
        ),
        "put": _operation(
            "wire_prompt_locale_put",
            "Choose the character's language: {success, language, order, previous_language, changed}",
            {
                "200": _json("WireObject", "stored"),
                "400": _json("WireObject", "unsupported language or invalid name"),
                "409": _json(
                    "WireObject", "detail.error_code language_preference_superseded: a newer choice won"
                ),
            },
            body="LanguageChoice",
        ),
    },
    **{
        f"/internal/memory/{{name}}/{route}": {
            method: _operation(
                f"wire_{route}",
                summary,
                {"200": TEXT if route == "scoped_context" else _json("WireObject", "answer")},
                body=None if method == "get" else "WireObject",
                parameters=[NAME_PARAMETER] if method == "post" else [NAME_PARAMETER, *query],
                secret=True,
            )
        }
        for route, method, summary, query in (
            (
                "scoped_facts",
                "post",
                "Group chat: store {subject, facts (1..32), language?, display_name?}",
                [],
            ),
            (
                "scoped_history",
                "post",
                "Group chat: extract facts about {subject} from {input_history, speaker_label?, speaker_id?, "
                "display_name?, language?}; 502 when extraction fails (keep the buffer and retry)",
                [],
            ),
            (
                "scoped_context",
                "post",
                "Group chat: persona and reflections of {subjects (1..8)}, text/plain",
                [],
            ),
            ("scoped_mentions", "post", "Group chat: count mentions {response_text, subjects}", []),
            (
                "scoped_forget",
                "post",
                "Group chat: erase {subject, forget_epoch?} everywhere; idempotent",
                [],
            ),
            (
                "scoped_subjects",
                "get",
                "Group chat: the subjects of one platform",
                [{"name": "platform", "in": "query", "required": True, "schema": {"type": "string"}}],
            ),
            (
                "forget_epochs",
                "get",
                "Group chat: forget tombstones of subject keys",
                [
                    {
                        "name": "subject",
                        "in": "query",
                        "schema": {"type": "array", "items": {"type": "string"}},
                    }
                ],
            ),
        )
    },
    "/internal/memory/{name}/theater/stories": {
        "get": _operation(
            "wire_theater_stories",
            "Theater stories: {ok, stories: [{story_id, title, memory_summaries: [one summary string per "
            "session]}]}",
            {"200": _json("WireObject", "stories"), "404": _json("WireObject", "character_not_found")},
            secret=True,
        )
    },
    "/internal/memory/{name}/theater/forget": {
        "post": _operation(
            "wire_theater_forget",
            "Forget a story {story_id: 1..256}: {ok, removed_recent, removed_time_index, forget_marker}",
            {
                "200": _json("WireObject", "forgotten"),
                "404": _json("WireObject", "character_not_found"),
                "422": _json("WireObject", "story_id_required, or an id over 256 characters"),
            },
            body="WireObject",
            secret=True,
        )
    },
    "/internal/memory/{name}/theater/retract": {
        "post": _operation(
            "wire_theater_retract",
            "Retract a session's capsule {story_id, session_id (1..256), archive_through_revision ≥ 0, "
            "archive_request_id? ≤ 160, archive_attempt? ≥ 0}: {ok, removed_recent, removed_time_index}",
            {
                "200": _json("WireObject", "retracted"),
                "404": _json("WireObject", "character_not_found"),
                "422": _json("WireObject", "theater_episode_identity_required, or a field out of range"),
            },
            body="WireObject",
            secret=True,
        )
    },
    "/internal/memory/{name}/repetition_insights": {
        "post": _operation(
            "wire_repetition_insights",
            "Phrases repeated across the last replies {language: en|es|pt|ru|ja|ko|zh-CN|zh-TW, "
            "assistant_message_limit?: 3..100 = 100}: {success, schema_version, artifact_type, "
            "character_name, language, parameters, summary, candidates}",
            {
                "200": _json("WireObject", "insights"),
                "404": _json("WireObject", "character_not_found"),
                "422": _json("WireObject", "a missing or unknown language, or a limit outside 3..100"),
            },
            body="WireObject",
            secret=True,
        )
    },
    "/health": {
        "get": _operation(
            "wire_health", "Signed health payload", {"200": _json("LifecycleAnswer", "health")}, parameters=[]
        )
    },
    "/shutdown": {
        "post": _operation(
            "wire_shutdown",
            "Stop the server (when NEKOMEM_ALLOW_SHUTDOWN)",
            {"200": _json("LifecycleAnswer", "stopping")},
            parameters=[],
            secret=True,
        )
    },
    "/reload": {
        "post": _operation(
            "wire_reload",
            "Every worker drops its caches before its next request",
            {"200": _json("LifecycleAnswer", "reloaded"), "422": _json("WireError", "bad body")},
            body="LifecycleAnswer",
            body_required=False,
            parameters=[],
            secret=True,
        )
    },
    "/release_character/{name}": {
        "post": _operation(
            "wire_release_character",
            "Before a rename or delete: cancel the character's derived background work",
            {
                "200": _json("LifecycleAnswer", "{status: success, character_name, cancelled_derived_tasks}"),
                "400": _json("LifecycleAnswer", "{status: error, character_name, message}: invalid name"),
                "409": _json("Blocked", "storage not ready (restricted mode)"),
            },
        )
    },
    "/internal/storage/startup/block": {
        "post": _operation(
            "wire_storage_block",
            "Enter restricted mode",
            {"200": _json("LifecycleAnswer", "blocked"), "422": _json("WireError", "bad body")},
            body="LifecycleAnswer",
            body_required=False,
            parameters=[],
            secret=True,
        )
    },
    "/internal/storage/startup/continue": {
        "post": _operation(
            "wire_storage_continue",
            "Leave restricted mode",
            {"200": _json("LifecycleAnswer", "released"), "409": _json("Blocked", "still blocked")},
            parameters=[],
            secret=True,
        )
    },
}


def add_wire_routes(result: Json, generator: Any, request: Any, public: bool) -> Json:
    """drf-spectacular postprocessing hook: the wire routes join the generated schema."""
    result.setdefault("paths", {}).update(WIRE_PATHS)
    components = result.setdefault("components", {})
    components.setdefault("schemas", {}).update(COMPONENTS)
    components.setdefault("securitySchemes", {})["internalBearer"] = {
        "type": "http",
        "scheme": "bearer",
        "description": "NEKOMEM_API_TOKEN (or var/api_token)",
    }
    return result
