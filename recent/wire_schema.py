"""The recent layer's wire routes in the OpenAPI schema (registered with nekomem/wire_schema.py)."""

from __future__ import annotations

from nekomem.wire_schema import (
    BODY_ERRORS,
    ERRORS,
    HTML,
    LANGUAGE_QUERY,
    NAME_PARAMETER,
    TEXT,
    Json,
    json_response,
    operation,
    register,
)

COMPONENTS: dict[str, Json] = {
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
    "Gap": {
        "type": "object",
        "properties": {"gap_seconds": {"type": "number"}, "error": {"type": "string"}},
        "required": ["gap_seconds"],
    },
}


def _turn_route(operation_id: str, summary: str, *, body_required: bool = True) -> Json:
    return {
        "post": operation(
            operation_id,
            summary,
            {
                "200": json_response("StatusAnswer", "done, or {status: error, message} on failure"),
                **BODY_ERRORS,
            },
            body="HistoryRequest",
            body_required=body_required,
        )
    }


PATHS: dict[str, Json] = {
    "/memory_browser": {
        "get": operation(
            "wire_memory_browser",
            "The single-page memory browser (every character's recent window and the two switches; "
            "the full browser is at /)",
            {"200": HTML},
            parameters=[],
        )
    },
    "/cache/{name}": _turn_route("wire_cache", "Store one turn, no LLM call"),
    "/process/{name}": _turn_route("wire_process", "Store one turn and compress in the background"),
    "/renew/{name}": _turn_route("wire_renew", "Store one turn and compress before answering"),
    "/settle/{name}": _turn_route("wire_settle", "Finish the session's work", body_required=False),
    "/get_recent_history/{name}": {
        "get": operation(
            "wire_get_recent_history",
            "Recent window as a transcript",
            {"200": TEXT, **ERRORS},
            parameters=[NAME_PARAMETER, LANGUAGE_QUERY],
        )
    },
    "/last_conversation_gap/{name}": {
        "get": operation(
            "wire_last_conversation_gap",
            "Seconds since the last stored message (-1: none)",
            {"200": json_response("Gap", "gap"), "500": json_response("Gap", "server error"), **ERRORS},
        )
    },
    "/cancel_correction/{name}": {
        "post": operation(
            "wire_cancel_correction",
            "Cancel the history review in flight",
            {"200": json_response("StatusAnswer", "cancelled or no_task"), **ERRORS},
        )
    },
    "/internal/memory/{name}/theater/stories": {
        "get": operation(
            "wire_theater_stories",
            "Theater stories: {ok, stories: [{story_id, title, memory_summaries: [one summary string per "
            "session]}]}",
            {
                "200": json_response("WireObject", "stories"),
                "404": json_response("WireObject", "character_not_found"),
            },
            secret=True,
        )
    },
    "/internal/memory/{name}/theater/forget": {
        "post": operation(
            "wire_theater_forget",
            "Forget a story {story_id: 1..256}: {ok, removed_recent, removed_time_index, forget_marker}",
            {
                "200": json_response("WireObject", "forgotten"),
                "404": json_response("WireObject", "character_not_found"),
                "422": json_response("WireObject", "story_id_required, or an id over 256 characters"),
            },
            body="WireObject",
            secret=True,
        )
    },
    "/internal/memory/{name}/theater/retract": {
        "post": operation(
            "wire_theater_retract",
            "Retract a session's capsule {story_id, session_id (1..256), archive_through_revision ≥ 0, "
            "archive_request_id? ≤ 160, archive_attempt? ≥ 0}: {ok, removed_recent, removed_time_index}",
            {
                "200": json_response("WireObject", "retracted"),
                "404": json_response("WireObject", "character_not_found"),
                "422": json_response(
                    "WireObject", "theater_episode_identity_required, or a field out of range"
                ),
            },
            body="WireObject",
            secret=True,
        )
    },
    "/internal/memory/{name}/repetition_insights": {
        "post": operation(
            "wire_repetition_insights",
            "Phrases repeated across the last replies {language: en|es|pt|ru|ja|ko|zh-CN|zh-TW, "
            "assistant_message_limit?: 3..100 = 100}: {success, schema_version, artifact_type, "
            "character_name, language, parameters, summary, candidates}",
            {
                "200": json_response("WireObject", "insights"),
                "404": json_response("WireObject", "character_not_found"),
                "422": json_response(
                    "WireObject", "a missing or unknown language, or a limit outside 3..100"
                ),
            },
            body="WireObject",
            secret=True,
        )
    },
}

register(__name__, paths=PATHS, components=COMPONENTS)
