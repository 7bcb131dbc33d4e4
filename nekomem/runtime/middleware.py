from __future__ import annotations

import hmac
import io
import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse

from nekomem.http import json_error, json_ok, wants_json_errors
from nekomem.runtime.launcher import LaunchCredential, install_mode, launch_credential
from nekomem.runtime.state import Block, current_block

Handler = Callable[[HttpRequest], HttpResponse]

# The status report answers too: it is where a blocked storage is explained.
RESTRICTED_MODE_ALLOWED = frozenset(
    {
        "/health",
        "/shutdown",
        "/internal/storage/startup/continue",
        "/internal/storage/startup/block",
        "/api/v1/status",
    }
)
BLOCKED_MESSAGE = "记忆存储尚未就绪（启动中或已被锁定），请稍后再试。"


def blocked_response(block: Block) -> HttpResponse:
    """The reference's 409 body for a request refused in restricted mode."""
    return json_ok(
        {
            "ok": False,
            "error_code": "storage_startup_blocked",
            "blocking_reason": block.reason,
            "limited_mode": True,
            "error": BLOCKED_MESSAGE,
        },
        status=409,
    )


@dataclass(frozen=True)
class RouteBody:
    """A route family whose bodies differ from the rest: ``limit`` replaces the body limit (answered
    with ``too_large()`` past it), and ``media_checked_by_route`` lets the route check the media type
    itself (the knowledge import takes multipart uploads, its JSON routes answer a wrong type 400)."""

    prefix: str
    media_checked_by_route: bool = False
    limit: int | None = None
    too_large: Callable[[], HttpResponse] | None = None


_route_bodies: list[RouteBody] = []


def register_route_body(rule: RouteBody) -> None:
    """Registered by an app's ``ready()``; the longest matching prefix wins."""
    _route_bodies[:] = [r for r in _route_bodies if r.prefix != rule.prefix]
    _route_bodies.append(rule)
    _route_bodies.sort(key=lambda r: -len(r.prefix))


def route_body(path: str) -> RouteBody | None:
    return next((rule for rule in _route_bodies if path.startswith(rule.prefix)), None)


def _body_too_large(limit: int) -> HttpResponse:
    return json_error(f"body over {limit} bytes", status=413, error_code="body_too_large")


BODY_READ_CHUNK = 64 * 1024


def _read_bounded(stream: BinaryIO, limit: int) -> bytes | None:
    """The whole body, or None as soon as it grows past ``limit``."""
    parts: list[bytes] = []
    size = 0
    while chunk := stream.read(BODY_READ_CHUNK):
        size += len(chunk)
        if size > limit:
            return None
        parts.append(chunk)
    return b"".join(parts)


class BodySizeLimitMiddleware:
    """The one body limit, ``NEKOMEM_MAX_BODY_BYTES``: over it 413 before anything reads the body.

    A chunked body has no Content-Length; the HTTP server hands it on as a stream, and Django would
    read it as empty (its stream stops at the declared length, 0). It is read here, bounded by the
    same limit, and handed on with its real length.
    """

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.NEKOMEM_MAX_BODY_BYTES
        rule = route_body(request.path)
        if rule is not None and rule.limit is not None:
            limit = rule.limit
        too_large = rule.too_large if rule is not None and rule.too_large is not None else None
        declared = request.META.get("CONTENT_LENGTH") or ""
        if not declared and "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            body = _read_bounded(request.META["wsgi.input"], limit)
            if body is None:
                return too_large() if too_large else _body_too_large(limit)
            request.META["CONTENT_LENGTH"] = str(len(body))
            request._stream = io.BytesIO(body)  # type: ignore[attr-defined]
            return self.get_response(request)
        try:
            length = int(declared or 0)
        except ValueError:
            return json_error("invalid Content-Length", status=400, error_code="invalid_request")
        if length > limit:
            return too_large() if too_large else _body_too_large(limit)
        return self.get_response(request)


class JsonErrorBodyMiddleware:
    """A bodiless error answer (405 from a method check, say) gets a JSON body on the API routes.

    The chat server and API clients read ``message`` from every 4xx; browser pages keep Django's.
    """

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code >= 400
            and not response.streaming
            and not response.content
            and wants_json_errors(request)
        ):
            answer = json_error(
                response.reason_phrase, status=response.status_code, error_code=_slug(response.reason_phrase)
            )
            for header in ("Allow", "WWW-Authenticate", "Retry-After"):
                if header in response:
                    answer[header] = response[header]
            return answer
        return response


def _slug(phrase: str) -> str:
    return "_".join(phrase.lower().split())


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


# Routes that steer the process or its storage: a local web page or another local user's program
# must not reach them just by being on loopback, so they need the shared secret everywhere, as the
# original's internal authentication does.
SECRET_ONLY_PREFIXES = ("/internal/", "/shutdown", "/reload")
# Routes protected by Django's session + CSRF: they take HTML form bodies, and off loopback they ask
# for the admin's login instead of the bearer token (a browser cannot send one).
SESSION_PROTECTED_PREFIXES = ("/admin/", "/browse/", "/knowledge/")
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _forbidden(error_code: str, message: str, status: int = 403) -> HttpResponse:
    return json_error(message, status=status, error_code=error_code)


class HostGuardMiddleware:
    """Serve only requests addressed to this machine's names or the configured hosts.

    After DNS rebinding a page on ``evil.example`` reaches 127.0.0.1 but still sends its own name as
    ``Host``; refusing unknown names here keeps it from reading the memory.
    """

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            request.get_host()
        except DisallowedHost:
            return _forbidden("disallowed_host", "this Host is not served; see NEKOMEM_ALLOWED_HOSTS", 400)
        return self.get_response(request)


def _foreign_origin(request: HttpRequest) -> bool:
    origin = request.META.get("HTTP_ORIGIN")
    if origin is None:
        return False
    own = f"{request.scheme}://{request.get_host()}"
    return origin != own and origin not in settings.NEKOMEM_ALLOWED_ORIGINS


class CrossSiteGuardMiddleware:
    """Refuse requests a web page sends from another origin.

    Browsers mark them with ``Origin`` (every POST, and every CORS request) or
    ``Sec-Fetch-Site: cross-site``. The chat server sends neither. A top-level GET navigation is
    let through: the page that caused it cannot read the answer, and a link to the memory browser
    from elsewhere keeps working.
    """

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        meta = request.META
        navigation = request.method in {"GET", "HEAD"} and meta.get("HTTP_SEC_FETCH_MODE") == "navigate"
        if _foreign_origin(request) or (meta.get("HTTP_SEC_FETCH_SITE") == "cross-site" and not navigation):
            return _forbidden("cross_site_request", "requests from other web origins are refused")
        return self.get_response(request)


def _has_body(request: HttpRequest) -> bool:
    length = request.META.get("CONTENT_LENGTH") or "0"
    return (length.isdigit() and int(length) > 0) or "HTTP_TRANSFER_ENCODING" in request.META


def _is_json(content_type: str) -> bool:
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type == "application/json" or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


def _media_checked_by_route(path: str) -> bool:
    rule = route_body(path)
    return rule is not None and rule.media_checked_by_route


class JsonBodyMiddleware:
    """A body outside the session-protected pages must be ``application/json`` (else 415).

    A web page can send text/plain or form bodies cross-site without asking first; a JSON body
    makes the browser ask (a CORS preflight), and nobody here answers yes.
    """

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if (
            request.method in BODY_METHODS
            and not request.path.startswith(SESSION_PROTECTED_PREFIXES)
            and _has_body(request)
            and not _is_json(request.META.get("CONTENT_TYPE", ""))
            and not _media_checked_by_route(request.path)
        ):
            return _forbidden("unsupported_media_type", "the body must be application/json", 415)
        return self.get_response(request)


class ClientAccessMiddleware:
    """Who may call which route.

    Loopback clients pass, except on the internal routes; everyone else, and every call of an
    internal route, needs ``Authorization: Bearer $NEKOMEM_API_TOKEN``. In install mode the internal
    routes also take the launcher's credential (``nekomem.runtime.launcher``).
    """

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        secret_only = request.path.startswith(SECRET_ONLY_PREFIXES)
        if not secret_only and _is_loopback(request.META.get("REMOTE_ADDR", "")):
            return self.get_response(request)
        if request.path == "/" or request.path.startswith(SESSION_PROTECTED_PREFIXES):
            return self.get_response(request)  # the page itself asks for a staff login
        token = settings.NEKOMEM_API_TOKEN
        bearer_ok = bool(token) and hmac.compare_digest(
            request.META.get("HTTP_AUTHORIZATION", "").encode(), f"Bearer {token}".encode()
        )
        if secret_only and not bearer_ok and install_mode():
            return self._launcher_access(request)
        if not token:
            return _forbidden("forbidden", "only loopback clients are served: NEKOMEM_API_TOKEN is empty")
        if not bearer_ok:
            return _forbidden("unauthorized", "missing or wrong bearer token", 401)
        return self.get_response(request)

    def _launcher_access(self, request: HttpRequest) -> HttpResponse:
        """Install mode: the launcher's token, or a native loopback client as older builds call."""
        credential = launch_credential(request)
        if credential in {LaunchCredential.TOKEN_OK, LaunchCredential.NATIVE_LOOPBACK}:
            return self.get_response(request)
        if credential is LaunchCredential.TOKEN_WRONG:
            return _forbidden("csrf_token_invalid", "wrong X-CSRF-Token for this launch")
        return _forbidden("csrf_token_required", "X-CSRF-Token (the launch token) or the bearer token needed")


class RestrictedModeMiddleware:
    """409 for every route but the lifecycle ones while storage is not ready (reference §1.1)."""

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.rstrip("/") in RESTRICTED_MODE_ALLOWED:
            return self.get_response(request)
        block = current_block()
        if block is not None:
            return blocked_response(block)
        return self.get_response(request)
