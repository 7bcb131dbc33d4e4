from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from nekomem.characters.language import character_language, language_arrival_stamp
from nekomem.characters.locks import wait_for_settled
from nekomem.characters.selectors import character_get
from nekomem.characters.services import character_language_offer
from nekomem.errors import storage_unavailable
from nekomem.http import BadRequestBody, json_error, json_ok, read_json_object, validated_name
from nekomem.language.resolution import resolve_language
from nekomem.subjects import SUBJECTS_MAX, SubjectError, subject_parse
from recall import locale
from recall.engine import CONFIGS
from recall.index_cache import RecallIndexBuilding
from recall.rendering import render_recall_markdown
from recall.selectors import working_context_render
from recall.services import RecallRequest, recall_failed_body, recall_query

logger = logging.getLogger(__name__)


@require_GET
@validated_name
def new_dialog(request: HttpRequest, name: str) -> HttpResponse:
    arrived = language_arrival_stamp()
    character = wait_for_settled(name)
    if character is None:
        return HttpResponse("", content_type="text/plain; charset=utf-8")
    requested = request.GET.get("language")
    _remember_language(character.pk, requested, arrived)
    language = character_language(
        character, request_language=requested, render_language=request.GET.get("render_language")
    )
    body = working_context_render(character=character, language=language)
    return HttpResponse(body, content_type="text/plain; charset=utf-8")


def _remember_language(character_id: int, language: str | None, arrived: int) -> None:
    """An explicit supported language on a read is remembered too; a store that cannot take it now
    costs the choice, never the answer (the request still renders in it)."""
    try:
        character_language_offer(character_id=character_id, language=language, order=arrived)
    except Exception as exc:
        if not storage_unavailable(exc):
            raise
        logger.warning("language choice not stored for character=%s: storage unavailable", character_id)


# The deprecated GET kept for old callers: a header, the query, and a pointer to /query_memory.


@require_GET
@validated_name
def search_for_memory(request: HttpRequest, name: str, query: str) -> HttpResponse:
    language = resolve_language(request.GET.get("language"))
    body = locale.text(language, "search_placeholder", name=name, query=query)
    return HttpResponse(body, content_type="text/plain; charset=utf-8")


# --- POST /query_memory/{name} (issue 5) -----------------------------------------------------------------


def _truthy(value: object) -> bool:
    return value is True or (isinstance(value, str) and value.lower() in ("1", "true", "yes"))


def _subject_keys(raw: object) -> list[str]:
    """1..8 subjects, each a subject object (§1.6) or its key ``<kind>:<subject_id>``."""
    if not isinstance(raw, list) or not raw or len(raw) > SUBJECTS_MAX:
        raise BadRequestBody(f"subjects must be a list of 1..{SUBJECTS_MAX} subjects")
    keys = []
    for item in raw:
        if isinstance(item, str) and item.strip():
            keys.append(item.strip())
            continue
        try:
            keys.append(subject_parse(item).key)
        except SubjectError as exc:
            raise BadRequestBody(str(exc)) from exc
    return keys


def _recall_request(request: HttpRequest) -> RecallRequest:
    body = read_json_object(request)
    query, time_expr, subjects = body.get("query"), body.get("time"), body.get("subjects")
    language = body.get("language")
    if query is not None and not isinstance(query, str):
        raise BadRequestBody("query must be a string")
    if time_expr is not None and not isinstance(time_expr, str):
        raise BadRequestBody("time must be a string")
    if language is not None and not isinstance(language, str):
        raise BadRequestBody("language must be a string")
    # The original answers an explicit empty list with 422 (subjects only mean something in group chat).
    if subjects is not None:
        subjects = _subject_keys(subjects)
    config = request.GET.get("config") or body.get("config")
    if config is not None and config not in CONFIGS:
        raise BadRequestBody(f"config must be one of {sorted(CONFIGS)}")
    return RecallRequest(
        query=query or "",
        time=time_expr or None,
        subjects=subjects,
        language=language,
        explain=_truthy(request.GET.get("explain")) or _truthy(body.get("explain")),
        config=config,
    )


@csrf_exempt
@require_POST
@validated_name
def query_memory(request: HttpRequest, name: str) -> HttpResponse:
    arrived = language_arrival_stamp()
    try:
        recall_request = _recall_request(request)
    except BadRequestBody as exc:
        return json_error(str(exc), status=422, error_code="invalid_request")
    character = character_get(name=name) if recall_request.language else None
    if character is not None:
        _remember_language(character.pk, recall_request.language, arrived)
    markdown = request.GET.get("format") == "markdown"
    try:
        body = recall_query(name=name, request=recall_request)
        failed = False
    except RecallIndexBuilding:
        logger.info("query_memory character=%s answered empty: its recall index is being built", name)
        body, failed = recall_failed_body(recall_request.query, error_code="recall_index_building"), True
    except Exception:
        # Recall never fails the chat: any internal error is an empty answer with an error code.
        logger.exception("query_memory failed character=%s", name)
        body, failed = recall_failed_body(recall_request.query), True
    if not markdown:
        return json_ok(body)
    language = character_language(character_get(name=name), request_language=recall_request.language)
    text = render_recall_markdown(
        body["results"],
        language=language,
        query_and_time=bool(recall_request.query and recall_request.time),
        failed=failed,
    )
    return HttpResponse(text, content_type="text/markdown; charset=utf-8")
