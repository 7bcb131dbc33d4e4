"""Conversation write routes and recent-history reads (wire-compatible, reference §1.2–1.3)."""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from nekomem.characters.language import language_arrival_stamp
from nekomem.characters.selectors import character_get
from nekomem.http import conversation_route, json_ok, read_history_request, validated_name
from recent.messages import parse_history
from recent.rendering import recent_history_text
from recent.review import review_cancel
from recent.selectors import raw_log_last_timestamp
from recent.services import CompressMode, TurnRecorded, turn_record

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
    count, _ = _record(request, name, append_recent=True, compress="never")
    return json_ok({"status": "cached", "count": count})


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
    # The chat server's usual settle carries an empty list or nothing at all; both settle.
    _record(request, name, append_recent=False, compress="background", required=False)
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
