"""The 17 routes of public knowledge (reference §1.8, ``/internal/knowledge``) in the OpenAPI schema.

Registered with nekomem/wire_schema.py, which assembles every app's fragment."""

from __future__ import annotations

from nekomem.wire_schema import Json, json_response, operation, ref, register

KNOWLEDGE_FLAGS: Json = {
    "ready": {"type": "boolean"},
    "enabled": {"type": "boolean"},
    "tool_available": {"type": "boolean", "description": "ready and enabled and a sound pack has an entry"},
}
COMPONENTS: dict[str, Json] = {
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
KNOWLEDGE_ERRORS: dict[str, Json] = {
    "400": json_response(
        "KnowledgeFailure", "invalid_request: bad JSON, not an object, over 64 KiB, not application/json"
    ),
    "403": json_response("WireError", "a cross-site Origin or Referer"),
    "409": json_response("Blocked", "storage not ready (restricted mode)"),
    "500": json_response("KnowledgeFailure", "knowledge_error"),
    "503": json_response("KnowledgeFailure", "knowledge_starting"),
}


def _knowledge(method: str, operation_id: str, summary: str, *, body: str | None = None) -> Json:
    built = operation(
        operation_id,
        summary,
        {"200": json_response("KnowledgeAnswer", "the payload, or a refusal"), **KNOWLEDGE_ERRORS},
        body=body,
        parameters=[],
        secret=True,
        tag="public knowledge (wire)",
    )
    return {method: built}


PATHS: dict[str, Json] = {
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
                    "application/json": {"schema": ref("KnowledgePack")},
                    "multipart/form-data": {"schema": {"type": "object"}},
                },
            },
            "responses": {
                "200": json_response(
                    "KnowledgeAnswer", "the job (state queued), unchanged, or a rejection reason"
                ),
                **KNOWLEDGE_ERRORS,
                "413": json_response("KnowledgeFailure", "pack_too_large: body over 10 MiB + 64 KiB"),
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

register(__name__, paths=PATHS, components=COMPONENTS)
