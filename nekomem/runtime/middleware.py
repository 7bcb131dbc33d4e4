from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from nekomem.http import json_ok
from nekomem.runtime.state import Block, current_block

Handler = Callable[[HttpRequest], HttpResponse]

RESTRICTED_MODE_ALLOWED = frozenset(
    {"/health", "/shutdown", "/internal/storage/startup/continue", "/internal/storage/startup/block"}
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


class BodySizeLimitMiddleware:
    """Refuse oversized bodies with 413 before anything reads them."""

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return json_ok({"status": "error", "message": "invalid Content-Length"}, status=400)
        limit = settings.NEKOMEM_MAX_BODY_BYTES
        if length > limit:
            return json_ok(
                {"status": "error", "error_code": "body_too_large", "message": f"body over {limit} bytes"},
                status=413,
            )
        return self.get_response(request)


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


class ClientAccessMiddleware:
    """Loopback clients pass; anyone else needs ``Authorization: Bearer $NEKOMEM_API_TOKEN``."""

    def __init__(self, get_response: Handler) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _is_loopback(request.META.get("REMOTE_ADDR", "")):
            return self.get_response(request)
        token = settings.NEKOMEM_API_TOKEN
        if not token:
            return json_ok(
                {"status": "error", "error_code": "forbidden", "message": "only loopback clients are served"},
                status=403,
            )
        supplied = request.META.get("HTTP_AUTHORIZATION", "")
        if not hmac.compare_digest(supplied.encode(), f"Bearer {token}".encode()):
            return json_ok(
                {"status": "error", "error_code": "unauthorized", "message": "missing or wrong bearer token"},
                status=401,
            )
        return self.get_response(request)


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
