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
            "Theater stories with their capsules: {ok, stories: [{story_id, title, memory_summaries}]}",
            {"200": _json("WireObject", "stories"), "404": _json("WireObject", "character_not_found")},
            secret=True,
        )
    },
    "/internal/memory/{name}/theater/forget": {
        "post": _operation(
            "wire_theater_forget",
            "Forget a story {story_id}: {ok, removed_recent, removed_time_index, forget_marker}",
            {"200": _json("WireObject", "forgotten"), "404": _json("WireObject", "character_not_found")},
            body="WireObject",
            secret=True,
        )
    },
    "/internal/memory/{name}/theater/retract": {
        "post": _operation(
            "wire_theater_retract",
            "Retract a session's capsule {story_id, session_id, archive_through_revision, "
            "archive_request_id?, archive_attempt?}: {ok, removed_recent, removed_time_index}",
            {"200": _json("WireObject", "retracted"), "404": _json("WireObject", "character_not_found")},
            body="WireObject",
            secret=True,
        )
    },
    "/internal/memory/{name}/repetition_insights": {
        "post": _operation(
            "wire_repetition_insights",
            "Phrases repeated across the last replies {language?, assistant_message_limit?: 3..100}: "
            "{success, schema_version, artifact_type, character_name, language, parameters, summary, "
            "candidates}",
            {"200": _json("WireObject", "insights"), "400": _json("WireObject", "bad limit")},
            body="WireObject",
            body_required=False,
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


# --- public knowledge packs (reference §1.8) -------------------------------------------------------------

KNOWLEDGE_FLAGS: Json = {
    "ready": {"type": "boolean"},
    "enabled": {"type": "boolean"},
    "tool_available": {"type": "boolean", "description": "ready and enabled and a sound pack has an entry"},
}
COMPONENTS.update(
    {
        "KnowledgeAnswer": {
            "type": "object",
            "description": "{ok: true, …payload} or a refusal {ok: false, reason} (not_found, "
            "knowledge_busy, invalid_request, a pack's rejection reason); the three flags on every answer.",
            "properties": {"ok": {"type": "boolean"}, "reason": {"type": "string"}, **KNOWLEDGE_FLAGS},
            "required": ["ok"],
        },
        "KnowledgeFailure": {
            "type": "object",
            "properties": {"ok": {"type": "boolean", "enum": [False]}, "reason": {"type": "string"}},
            "required": ["ok", "reason"],
        },
        "KnowledgePack": {
            "type": "object",
            "description": "A pack, schema v1: schema_version, pack_id, material_type, source, entries.",
        },
    }
)
KNOWLEDGE_ERRORS: dict[str, Json] = {
    "400": _json(
        "KnowledgeFailure", "invalid_request: bad JSON, not an object, over 64 KiB, not application/json"
    ),
    "403": _json("WireError", "a cross-site Origin or Referer"),
    "409": _json("Blocked", "storage not ready (restricted mode)"),
    "500": _json("KnowledgeFailure", "knowledge_error"),
    "503": _json("KnowledgeFailure", "knowledge_starting"),
}


def _knowledge(method: str, operation_id: str, summary: str, *, body: str | None = None) -> Json:
    operation = _operation(
        operation_id,
        summary,
        {"200": _json("KnowledgeAnswer", "the payload, or a refusal"), **KNOWLEDGE_ERRORS},
        body=body,
        parameters=[],
        secret=True,
    )
    operation["tags"] = ["public knowledge (wire)"]
    return {method: operation}


KNOWLEDGE_PATHS: dict[str, Json] = {
    "/internal/knowledge/query": _knowledge(
        "post",
        "knowledge_query",
        "Look up or sample entries: {query, limit 1-10, budget_ms 50-5000, mode lookup|sample, material_type "
        "auto|all|knowledge|corpus, language} → result, context, hits, card_ids, retrieval_mode, elapsed_ms",
        body="WireObject",
    ),
    "/internal/knowledge/availability": _knowledge("get", "knowledge_availability", "The three flags"),
    "/internal/knowledge/status": _knowledge("get", "knowledge_status", "Counts, embedding state, sources"),
    "/internal/knowledge/entries": _knowledge(
        "get",
        "knowledge_entries",
        "Entries: query, pack_id, limit 1-100, offset 0-20000 → total (null with a query)",
    ),
    "/internal/knowledge/entry": _knowledge("get", "knowledge_entry", "One entry by pack_id and title"),
    "/internal/knowledge/packs": _knowledge("get", "knowledge_packs", "Installed packs with their state"),
    "/internal/knowledge/packs/jobs": _knowledge(
        "get", "knowledge_jobs", "The last 50 import jobs, newest first"
    ),
    "/internal/knowledge/diagnostics/recent": _knowledge(
        "get", "knowledge_diagnostics", "The last 50 queries (never their text) and index batches"
    ),
    "/internal/knowledge/settings": _knowledge(
        "post", "knowledge_settings", "Switch knowledge on or off: {enabled}", body="WireObject"
    ),
    "/internal/knowledge/packs/import": {
        "post": {
            **_knowledge("post", "knowledge_import", "Import a pack (raw JSON or one multipart file part)")[
                "post"
            ],
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": _ref("KnowledgePack")},
                    "multipart/form-data": {"schema": {"type": "object"}},
                },
            },
            "responses": {
                "200": _json("KnowledgeAnswer", "the job (state queued), unchanged, or a rejection reason"),
                **KNOWLEDGE_ERRORS,
                "413": _json("KnowledgeFailure", "pack_too_large: body over 10 MiB + 64 KiB"),
            },
        }
    },
    "/internal/knowledge/packs/jobs/cancel": _knowledge(
        "post", "knowledge_job_cancel", "Cancel a queued or building import: {job_id}", body="WireObject"
    ),
    "/internal/knowledge/packs/jobs/discard": _knowledge(
        "post", "knowledge_job_discard", "Forget a finished import: {job_id}", body="WireObject"
    ),
    "/internal/knowledge/entry/disabled": _knowledge(
        "post", "knowledge_entry_disabled", "Disable an entry: {pack_id, title, disabled}", body="WireObject"
    ),
    "/internal/knowledge/packs/auto-context": _knowledge(
        "post", "knowledge_auto_context", "{pack_id, enabled}", body="WireObject"
    ),
    "/internal/knowledge/packs/index-policy": _knowledge(
        "post", "knowledge_index_policy", "{pack_id, local_embedding_enabled}", body="WireObject"
    ),
    "/internal/knowledge/packs/material-type": _knowledge(
        "post",
        "knowledge_material_type",
        "{pack_id, material_type: knowledge|corpus|null}",
        body="WireObject",
    ),
    "/internal/knowledge/packs/remove": _knowledge(
        "post", "knowledge_remove", "{pack_id}", body="WireObject"
    ),
}
WIRE_PATHS.update(KNOWLEDGE_PATHS)


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
