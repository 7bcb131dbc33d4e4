"""``/internal/knowledge/*`` (reference §1.8): thin adapters over the knowledge services and selectors.

Every answer carries the three flags (``ready``, ``enabled``, ``tool_available``). A refusal is
``200 {ok: false, reason}``; a bad body ``400 invalid_request``; the store not started ``503
knowledge_starting``; anything unexpected ``500 knowledge_error``, exactly.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from knowledge import selectors, services
from knowledge.packs import pack_id_is_valid
from knowledge.services import KnowledgeRefused

logger = logging.getLogger(__name__)

JSON_BODY_MAX_BYTES = 64 * 1024
ENTRIES_LIMIT_MAX = 100
ENTRIES_OFFSET_MAX = 20_000

Payload = dict[str, Any]


class InvalidRequest(Exception):
    """The request is not what the route takes: 400 invalid_request."""


def _answer(body: Payload, status: int = 200) -> JsonResponse:
    return JsonResponse(body, status=status, json_dumps_params={"ensure_ascii": False})


def _failure(reason: str, status: int) -> JsonResponse:
    return _answer({"ok": False, "reason": reason}, status=status)


def _cross_site_referer(request: HttpRequest) -> bool:
    """A browser page of another origin (the Origin header is the kernel middleware's)."""
    referer = request.META.get("HTTP_REFERER")
    if not referer:
        return False
    parts = urlsplit(referer)
    origin = f"{parts.scheme}://{parts.netloc}"
    return (
        origin != f"{request.scheme}://{request.get_host()}"
        and origin not in settings.NEKOMEM_ALLOWED_ORIGINS
    )


def knowledge_route(
    *methods: str, starting_answer: Callable[[], Payload] | None = None
) -> Callable[[Callable[..., Payload]], Callable[..., HttpResponse]]:
    """The route's frame: method, origin, readiness, refusals and failures answered as the original."""

    def decorate(view: Callable[..., Payload]) -> Callable[..., HttpResponse]:
        @csrf_exempt
        @require_http_methods(list(methods))
        @functools.wraps(view)
        def wrapper(request: HttpRequest) -> HttpResponse:
            if _cross_site_referer(request):
                return _failure("forbidden", 403)
            try:
                if not selectors.knowledge_ready():
                    if starting_answer is not None:
                        return _answer({"ok": True, **starting_answer()})
                    return _failure("knowledge_starting", 503)
                payload = view(request)
            except InvalidRequest:
                return _failure("invalid_request", 400)
            except KnowledgeRefused as refused:
                if refused.reason == "knowledge_starting":
                    return _failure("knowledge_starting", 503)
                return _answer({"ok": False, "reason": refused.reason, **selectors.knowledge_availability()})
            except Exception:
                logger.warning("knowledge route %s failed", request.path, exc_info=True)
                return _failure("knowledge_error", 500)
            # A payload may carry its own ``ok`` (a refused cancel, a rejected pack).
            return _answer({"ok": True, **payload, **selectors.knowledge_availability()})

        return wrapper

    return decorate


def _is_json_type(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


def json_object(request: HttpRequest) -> Payload:
    if not _is_json_type(request.META.get("CONTENT_TYPE", "")) and request.body:
        raise InvalidRequest
    raw = request.body
    if len(raw) > JSON_BODY_MAX_BYTES:
        raise InvalidRequest
    try:
        body = json.loads(raw.decode("utf-8")) if raw else {}
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidRequest from exc
    if not isinstance(body, dict):
        raise InvalidRequest
    return body


def _pack_id(body: Payload) -> str:
    value = body.get("pack_id")
    pack_id = value.strip() if isinstance(value, str) else ""
    if not pack_id:
        raise InvalidRequest
    return pack_id


def _flag(body: Payload, name: str) -> bool:
    value = body.get(name)
    if not isinstance(value, bool):
        raise InvalidRequest
    return value


def _int(value: object, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


# --- the chat's side ----------------------------------------------------------------------------------


@knowledge_route("POST")
def query(request: HttpRequest) -> Payload:
    body = json_object(request)
    text = body.get("query")
    if not isinstance(text, str):
        raise InvalidRequest
    language = body.get("language")
    return services.knowledge_query(
        query=text,
        mode=str(body.get("mode") or "lookup"),
        material_type=str(body.get("material_type") or "auto"),
        limit=_int(body.get("limit"), 3),
        budget_ms=_int(body.get("budget_ms"), services.QUERY_BUDGET_DEFAULT),
        language=language if isinstance(language, str) else None,
    )


def _not_started() -> Payload:
    return {"ready": False, "enabled": False, "tool_available": False}


@knowledge_route("GET", starting_answer=_not_started)
def availability(request: HttpRequest) -> Payload:
    return {}


def _status_not_started() -> Payload:
    return {
        "status": {"state": "starting", "error_code": "", **_not_started()},
        **_not_started(),
    }


# --- management: reads --------------------------------------------------------------------------------


@knowledge_route("GET", starting_answer=_status_not_started)
def status(request: HttpRequest) -> Payload:
    return {"status": selectors.knowledge_status()}


def _query_int(request: HttpRequest, name: str, *, default: int, low: int, high: int) -> int:
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise InvalidRequest from exc
    if not low <= value <= high:
        raise InvalidRequest
    return value


@knowledge_route("GET")
def entries(request: HttpRequest) -> Payload:
    pack_id = request.GET.get("pack_id", "").strip()
    if len(pack_id) > 64:
        raise InvalidRequest
    if pack_id and not pack_id_is_valid(pack_id):
        raise KnowledgeRefused("invalid_request")
    return selectors.knowledge_entries_list(
        query=request.GET.get("query", ""),
        pack_id=pack_id,
        limit=_query_int(request, "limit", default=50, low=1, high=ENTRIES_LIMIT_MAX),
        offset=_query_int(request, "offset", default=0, low=0, high=ENTRIES_OFFSET_MAX),
    )


@knowledge_route("GET")
def entry(request: HttpRequest) -> Payload:
    pack_id = request.GET.get("pack_id", "")
    title = request.GET.get("title", "")
    if not 2 <= len(pack_id) <= 64 or not 1 <= len(title) <= 500:
        raise InvalidRequest
    if not pack_id_is_valid(pack_id):
        raise KnowledgeRefused("invalid_request")
    found = selectors.knowledge_entry_get(pack_id=pack_id, title=title)
    if found is None:
        raise KnowledgeRefused("not_found")
    return {"entry": found}


@knowledge_route("GET")
def packs(request: HttpRequest) -> Payload:
    return {"packs": selectors.knowledge_packs_list()}


@knowledge_route("GET")
def jobs(request: HttpRequest) -> Payload:
    return {"jobs": selectors.knowledge_jobs_list()}


@knowledge_route("GET")
def diagnostics(request: HttpRequest) -> Payload:
    return selectors.knowledge_diagnostics()


# --- management: writes -------------------------------------------------------------------------------


@knowledge_route("POST")
def settings_set(request: HttpRequest) -> Payload:
    return services.knowledge_enabled_set(enabled=_flag(json_object(request), "enabled"))


def pack_bytes(request: HttpRequest) -> bytes:
    """The pack: the raw JSON body, or the one file part of a multipart upload."""
    content_type = request.META.get("CONTENT_TYPE", "")
    if content_type.lower().startswith("multipart/form-data"):
        files = [upload for name in request.FILES for upload in request.FILES.getlist(name)]
        fields = [value for name in request.POST for value in request.POST.getlist(name)]
        if len(files) != 1 or fields:
            raise InvalidRequest
        return b"".join(files[0].chunks())
    if not _is_json_type(content_type):
        raise InvalidRequest
    return request.body


@knowledge_route("POST")
def pack_import(request: HttpRequest) -> Payload:
    return services.knowledge_import_submit(raw=pack_bytes(request))


def _job_id(request: HttpRequest) -> str:
    job_id = json_object(request).get("job_id")
    if not isinstance(job_id, str) or not job_id:
        raise InvalidRequest
    return job_id


@knowledge_route("POST")
def job_cancel(request: HttpRequest) -> Payload:
    job_id = _job_id(request)
    return {"ok": services.knowledge_import_cancel(job_id=job_id), "job_id": job_id}


@knowledge_route("POST")
def job_discard(request: HttpRequest) -> Payload:
    job_id = _job_id(request)
    return {"ok": services.knowledge_import_discard(job_id=job_id), "job_id": job_id}


@knowledge_route("POST")
def entry_disabled(request: HttpRequest) -> Payload:
    body = json_object(request)
    title = body.get("title")
    if not isinstance(title, str):
        raise InvalidRequest
    return services.knowledge_entry_disabled_set(
        pack_id=_pack_id(body), title=title, disabled=_flag(body, "disabled")
    )


@knowledge_route("POST")
def pack_auto_context(request: HttpRequest) -> Payload:
    body = json_object(request)
    return services.knowledge_pack_auto_context_set(pack_id=_pack_id(body), enabled=_flag(body, "enabled"))


@knowledge_route("POST")
def pack_index_policy(request: HttpRequest) -> Payload:
    body = json_object(request)
    return services.knowledge_pack_local_embedding_set(
        pack_id=_pack_id(body), enabled=_flag(body, "local_embedding_enabled")
    )


@knowledge_route("POST")
def pack_material_type(request: HttpRequest) -> Payload:
    body = json_object(request)
    pack_id = _pack_id(body)
    material_type = body.get("material_type")
    if material_type is not None and material_type not in ("knowledge", "corpus"):
        raise InvalidRequest
    return services.knowledge_pack_material_type_set(pack_id=pack_id, material_type=material_type)


@knowledge_route("POST")
def pack_remove(request: HttpRequest) -> Payload:
    return services.knowledge_pack_remove(pack_id=_pack_id(json_object(request)))
