"""Conversation write routes and recent-history reads (wire-compatible, reference §1.2–1.3)."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from install import install_root
from nekomem.characters.language import language_arrival_stamp
from nekomem.characters.selectors import character_get
from nekomem.http import (
    BadRequestBody,
    conversation_route,
    json_error,
    json_ok,
    read_history_request,
    read_json_object,
    validated_name,
)
from recent.messages import parse_history
from recent.repetition import (
    ARTIFACT_TYPE,
    INSIGHT_LANGUAGES,
    MAX_CANDIDATES,
    MAX_MESSAGES,
    MIN_MESSAGES,
    MIN_REPLIES,
    SCHEMA_VERSION,
    repetition_analyse,
)
from recent.review import review_cancel
from recent.selectors import (
    assistant_replies_newest,
    raw_log_last_timestamp,
    recent_history_text,
    theater_stories,
)
from recent.services import CompressMode, TurnRecorded, turn_record
from recent.services.theater import (
    TheaterRequestError,
    capsule_options,
    is_theater_episode,
    theater_capsule_record,
    theater_session_retract,
    theater_story_forget,
)

logger = logging.getLogger(__name__)


def _record(
    request: HttpRequest, name: str, *, append_recent: bool, compress: CompressMode, required: bool = True
) -> tuple[int, TurnRecorded]:
    arrived = language_arrival_stamp()  # before any wait: arrival order decides the language choice
    input_history, language = read_history_request(request, required=required)
    messages = parse_history(input_history)
    recorded = turn_record(
        name=name,
        messages=messages,
        language=language,
        append_recent=append_recent,
        compress=compress,
        language_order=arrived,
    )
    return len(messages), recorded


@csrf_exempt
@require_POST
@validated_name
@conversation_route
def cache(request: HttpRequest, name: str) -> HttpResponse:
    # Only a body that names a capsule or a key is read twice; the chat turn's hot path is unchanged.
    if b"theater_numeric_v2" in request.body or b"idempotency_key" in request.body:
        theater = _cache_theater(request, name)
        if theater is not None:
            return theater
    count, _ = _record(request, name, append_recent=True, compress="never")
    return json_ok({"status": "cached", "count": count})


def _cache_theater(request: HttpRequest, name: str) -> HttpResponse | None:
    """A story capsule's ``/cache`` (reference §1.7); None for an ordinary batch without a key."""
    arrived = language_arrival_stamp()
    input_history, language = read_history_request(request)
    messages = parse_history(input_history)
    episode = is_theater_episode(messages)
    try:
        options = capsule_options(read_json_object(request), episode=episode)
        if not episode:
            return None
        status = theater_capsule_record(
            name=name, message=messages[0], options=options, language=language, language_order=arrived
        )
    except TheaterRequestError as exc:
        return json_ok({"status": "error", "message": str(exc)})
    return json_ok({"status": status, "count": 1 if status == "cached" else 0})


@csrf_exempt
@require_POST
@validated_name
@conversation_route
def process(request: HttpRequest, name: str) -> HttpResponse:
    _record(request, name, append_recent=True, compress="background")
    return json_ok({"status": "processed"})


@csrf_exempt
@require_POST
@validated_name
@conversation_route
def renew(request: HttpRequest, name: str) -> HttpResponse:
    _, recorded = _record(request, name, append_recent=True, compress="inline")
    if recorded.not_compressed is None:
        return json_ok({"status": "processed"})
    # The original answers only the status; the chat server reads nothing else, so these two keys are
    # ours: the window was over the threshold and stays uncompressed (a background job retries it).
    reason = recorded.not_compressed
    return json_ok({"status": "processed", "compressed": False, "compression_reason": reason})


@csrf_exempt
@require_POST
@validated_name
@conversation_route
def settle(request: HttpRequest, name: str) -> HttpResponse:
    # The chat server's usual settle carries an empty list or nothing at all; both settle. In a N.E.K.O.
    # install it compresses under the settle lock as the original does, so the /new_dialog of the
    # renewed session (which waits for that lock) carries the memo, not the whole raw window.
    compress: CompressMode = "inline" if install_root() is not None else "background"
    _record(request, name, append_recent=False, compress=compress, required=False)
    return json_ok({"status": "settled"})


@require_GET
@validated_name
def get_recent_history(request: HttpRequest, name: str) -> HttpResponse:
    character = character_get(name=name)
    body = recent_history_text(character=character, language=request.GET.get("language")) if character else ""
    return HttpResponse(body, content_type="text/plain; charset=utf-8")


@require_GET
@validated_name
def last_conversation_gap(request: HttpRequest, name: str) -> HttpResponse:
    try:
        character = character_get(name=name)
        last = raw_log_last_timestamp(character_id=character.pk) if character else None
    except Exception:
        logger.exception("last_conversation_gap failed character=%s", name)
        return json_ok({"gap_seconds": -1, "error": "server_error"}, status=500)
    if last is None:
        return json_ok({"gap_seconds": -1})
    return json_ok({"gap_seconds": (timezone.now() - last).total_seconds()})


@csrf_exempt
@require_POST
@validated_name
def cancel_correction(request: HttpRequest, name: str) -> HttpResponse:
    cancelled = review_cancel(name=name)
    return json_ok({"status": "cancelled" if cancelled else "no_task"})


# --- theater story management (reference §1.7) ------------------------------------------------------------


_CHARACTER_NOT_FOUND = {"ok": False, "error_code": "character_not_found"}


def _character_id(name: str) -> int | None:
    character = character_get(name=name)
    return character.pk if character is not None else None


@require_GET
@validated_name
def theater_stories_view(request: HttpRequest, name: str) -> HttpResponse:
    character_id = _character_id(name)
    if character_id is None:
        return json_ok(_CHARACTER_NOT_FOUND, status=404)
    return json_ok({"ok": True, "stories": theater_stories(character_id=character_id)})


def _theater_body(request: HttpRequest) -> dict:
    try:
        return read_json_object(request)
    except BadRequestBody as exc:
        raise TheaterRequestError("invalid_request") from exc


@csrf_exempt
@require_POST
@validated_name
def theater_forget(request: HttpRequest, name: str) -> HttpResponse:
    character_id = _character_id(name)
    if character_id is None:
        return json_ok(_CHARACTER_NOT_FOUND, status=404)
    try:
        removed = theater_story_forget(
            character_id=character_id, story_id=_theater_body(request).get("story_id")
        )
    except TheaterRequestError as exc:
        return json_error(str(exc), status=422, error_code=str(exc), ok=False)
    return json_ok(
        {
            "ok": True,
            "removed_recent": removed.removed_recent,
            "removed_time_index": removed.removed_time_index,
            "forget_marker": removed.forget_marker,
        }
    )


@csrf_exempt
@require_POST
@validated_name
def theater_retract(request: HttpRequest, name: str) -> HttpResponse:
    character_id = _character_id(name)
    if character_id is None:
        return json_ok(_CHARACTER_NOT_FOUND, status=404)
    try:
        body = _theater_body(request)
        removed = theater_session_retract(
            character_id=character_id,
            story_id=body.get("story_id"),
            session_id=body.get("session_id"),
            archive_through_revision=body.get("archive_through_revision"),
            archive_request_id=body.get("archive_request_id"),
            archive_attempt=body.get("archive_attempt"),
        )
    except TheaterRequestError as exc:
        return json_error(str(exc), status=422, error_code=str(exc), ok=False)
    return json_ok(
        {
            "ok": True,
            "removed_recent": removed.removed_recent,
            "removed_time_index": removed.removed_time_index,
        }
    )


# --- repetition insights (reference §1.7) ------------------------------------------------------------------


def _insight_request(body: dict) -> tuple[str, int]:
    """``language`` and ``assistant_message_limit`` as the original's request model takes them:
    the language one of the panel's eight codes exactly, the limit an integer 3..100 (100 when
    absent); anything else raises ``BadRequestBody``, never a fallback (reference §1.8)."""
    language = body.get("language")
    if not isinstance(language, str) or language not in INSIGHT_LANGUAGES:
        raise BadRequestBody(f"language is required and must be one of {', '.join(INSIGHT_LANGUAGES)}")
    limit = body.get("assistant_message_limit", MAX_MESSAGES)
    if isinstance(limit, bool) or not isinstance(limit, int) or not MIN_MESSAGES <= limit <= MAX_MESSAGES:
        raise BadRequestBody(
            f"assistant_message_limit must be an integer from {MIN_MESSAGES} to {MAX_MESSAGES}"
        )
    return language, limit


@csrf_exempt
@require_POST
@validated_name
def repetition_insights(request: HttpRequest, name: str) -> HttpResponse:
    """A local, read-only analysis of the character's last replies for phrases it keeps repeating."""
    try:
        language, limit = _insight_request(read_json_object(request))
    except BadRequestBody as exc:
        return json_error(str(exc), status=422, error_code="invalid_request")
    character = character_get(name=name)
    if character is None:
        return json_ok({"success": False, "error_code": "character_not_found"}, status=404)
    replies = assistant_replies_newest(character_id=character.pk, limit=limit)
    analysis = repetition_analyse(replies=replies, language=language)
    return json_ok(
        {
            "success": True,
            "schema_version": SCHEMA_VERSION,
            "artifact_type": ARTIFACT_TYPE,
            "character_name": character.name,
            "language": language,
            "parameters": {
                "assistant_message_limit": limit,
                "min_replies": MIN_REPLIES,
                "max_candidates": MAX_CANDIDATES,
            },
            **analysis,
        }
    )
