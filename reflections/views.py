"""Memory-server routes of the reflections layer (wire-compatible with the original, reference §1.4)."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from nekomem.characters.selectors import character_get
from nekomem.http import BadRequestBody, json_error, json_ok, read_json_object, validated_name
from reflections.selectors import reflection_funnel
from reflections.services import (
    followup_topics,
    reflection_synthesize,
    reflections_auto_promote,
    reflections_record_surfaced,
)
from reflections.services.records import reflection_to_file_dict

logger = logging.getLogger(__name__)

FUNNEL_DEFAULT_WINDOW = timedelta(days=7)


@csrf_exempt
@require_POST
@validated_name
def reflect(request: HttpRequest, name: str) -> HttpResponse:
    character = character_get(name=name)
    if character is None:
        return json_ok({"reflection": None, "auto_transitions": 0})
    transitions = reflections_auto_promote(character_id=character.pk)
    result = reflection_synthesize(character_id=character.pk)
    logger.info("reflect character=%s outcome=%s transitions=%d", character.pk, result.reason, transitions)
    return json_ok({"reflection": result.as_wire(), "auto_transitions": transitions})


@require_GET
@validated_name
def followup(request: HttpRequest, name: str) -> HttpResponse:
    character = character_get(name=name)
    if character is None:
        return json_ok({"topics": []})
    topics = followup_topics(character_id=character.pk)
    return json_ok({"topics": [reflection_to_file_dict(r) for r in topics]})


@csrf_exempt
@require_POST
@validated_name
def record_surfaced(request: HttpRequest, name: str) -> HttpResponse:
    try:
        body = read_json_object(request)
    except BadRequestBody as exc:
        return json_error(str(exc), status=422, error_code="invalid_request")
    ids = body.get("reflection_ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        return json_error(
            "reflection_ids must be a list of strings", status=422, error_code="invalid_request"
        )
    character = character_get(name=name)
    if character is not None and ids:
        reflections_record_surfaced(character_id=character.pk, reflection_ids=ids)
    return json_ok({"ok": True})


def _moment(raw: str | None, default: datetime) -> datetime:
    if raw is None or raw == "":
        return default
    parsed = datetime.fromisoformat(raw)  # ValueError on bad input
    return timezone.make_aware(parsed) if timezone.is_naive(parsed) else parsed


@require_GET
@validated_name
def funnel(request: HttpRequest, name: str) -> HttpResponse:
    now = timezone.now()
    try:
        until = _moment(request.GET.get("until"), now)
        since = _moment(request.GET.get("since"), until - FUNNEL_DEFAULT_WINDOW)
    except ValueError:
        return json_error(
            "since and until must be ISO-8601 timestamps", status=400, error_code="invalid_time"
        )
    if since > until:
        return json_error("since is after until", status=400, error_code="invalid_window")
    character = character_get(name=name)
    counts = (
        reflection_funnel(character_id=character.pk, since=since, until=until)
        if character is not None
        else reflection_funnel(character_id=-1, since=since, until=until)
    )
    return json_ok(
        {"lanlan_name": name, "since": since.isoformat(), "until": until.isoformat(), "counts": counts}
    )
