"""Small helpers the memory-server views share: name checks, the HistoryRequest body, errors."""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from nekomem.characters.names import InvalidCharacterName, validate_character_name
from nekomem.errors import storage_unavailable


class HistoryParseError(ValueError):
    """``input_history`` is not a JSON list of known messages: the original answers 200 + error."""


class BadRequestBody(ValueError):
    """The body is not what the route takes: answered 422 like the original's request validation."""


def json_error(message: str, *, status: int, error_code: str | None = None, **extra: Any) -> JsonResponse:
    body: dict[str, Any] = {"status": "error", "message": message}
    if error_code:
        body["error_code"] = error_code
    body.update(extra)
    return JsonResponse(body, status=status, json_dumps_params={"ensure_ascii": False})


def json_ok(body: dict[str, Any], status: int = 200) -> JsonResponse:
    return JsonResponse(body, status=status, json_dumps_params={"ensure_ascii": False})


def json_ok_string(text: str) -> JsonResponse:
    """A bare JSON string body, as the original's routes that return a ``str`` answer."""
    return JsonResponse(text, safe=False, json_dumps_params={"ensure_ascii": False})


def validated_name(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Refuse an invalid character name with 400 before the view runs."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, name: str, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            validate_character_name(name)
        except InvalidCharacterName as exc:
            return json_error(str(exc), status=400, error_code="invalid_character_name")
        return view(request, name, *args, **kwargs)

    return wrapper


def read_json_object(request: HttpRequest) -> dict[str, Any]:
    if not request.body:
        return {}
    try:
        body = json.loads(request.body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadRequestBody(f"body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise BadRequestBody("body must be a JSON object")
    return body


def read_history_request(request: HttpRequest, *, required: bool = True) -> tuple[Any, str | None]:
    """Return (input_history, language) from a ``HistoryRequest`` body.

    ``required=False`` (``/settle``): no body, or no ``input_history``, means no messages.
    """
    body = read_json_object(request)
    if "input_history" not in body:
        if not required:
            return "[]", _language(body)
        raise BadRequestBody("input_history is required")
    if not isinstance(body["input_history"], str):
        raise BadRequestBody("input_history must be a JSON string holding the message list")
    return body["input_history"], _language(body)


def _language(body: dict[str, Any]) -> str | None:
    language = body.get("language")
    if language is not None and not isinstance(language, str):
        raise BadRequestBody("language must be a string")
    return language


def conversation_route(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The original's error style for conversation routes.

    A malformed request body is a 422; anything that fails after that is answered
    ``200 {"status": "error", "message": …}``, which the chat server already handles.
    """
    logger = logging.getLogger(view.__module__)

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except BadRequestBody as exc:
            return json_error(str(exc), status=422, error_code="invalid_request")
        except HistoryParseError as exc:
            return json_error(str(exc), status=200)
        except Exception as exc:
            if storage_unavailable(exc):
                # An outage, not a bug: no traceback per request, and 503 so the caller retries.
                logger.warning("%s: storage unavailable (%s)", request.path.split("/")[1], type(exc).__name__)
                return json_error(
                    "storage is unavailable, try again shortly", status=503, error_code="storage_unavailable"
                )
            logger.exception("%s failed", request.path.split("/")[1])
            return json_error(f"{type(exc).__name__}: internal error", status=200)

    return wrapper


# --- Django's own error pages, as JSON for the chat server's routes -------------------------------------

# Pages a person opens in a browser keep Django's HTML error pages.
BROWSER_PREFIXES = ("/admin/", "/memory_browser", "/api/v1/docs")


def wants_json_errors(request: HttpRequest) -> bool:
    return not request.path.startswith(BROWSER_PREFIXES)


def _error_page(
    request: HttpRequest, status: int, error_code: str, message: str, html: Callable[[], HttpResponse]
) -> HttpResponse:
    return json_error(message, status=status, error_code=error_code) if wants_json_errors(request) else html()


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _error_page(
        request,
        400,
        "invalid_request",
        "bad request",
        lambda: defaults.bad_request(request, exception or ValueError()),
    )


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _error_page(
        request,
        403,
        "forbidden",
        "forbidden",
        lambda: defaults.permission_denied(request, exception or PermissionError()),
    )


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _error_page(
        request, 404, "not_found", "no such route", lambda: defaults.page_not_found(request, exception)
    )


def server_error(request: HttpRequest) -> HttpResponse:
    # Django calls this while handling the exception, so sys.exc_info names it: a storage outage is
    # a 503 the caller retries, not a bug.
    if storage_unavailable(sys.exc_info()[1]):
        return json_error(
            "storage is unavailable, try again shortly", status=503, error_code="storage_unavailable"
        )
    return _error_page(request, 500, "server_error", "internal error", lambda: defaults.server_error(request))
