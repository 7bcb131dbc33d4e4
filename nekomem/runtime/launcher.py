"""The launcher's credential for the control routes in install mode (reference §12, §1.7).

The original launcher and main server call the control routes either with ``X-CSRF-Token: <launch
token>`` (newer builds) or bare from a native loopback client (older builds). Both are let in here,
besides the Bearer token every mode accepts; a browser never is, because a page can neither forge the
absence of ``Origin``/``Sec-Fetch-*`` nor read the launch token.
"""

from __future__ import annotations

import hmac
import ipaddress
from enum import Enum

from django.conf import settings
from django.http import HttpRequest

CSRF_HEADER = "HTTP_X_CSRF_TOKEN"
# Anything a proxy or a browser adds: a native client of the launcher sends none of them.
FORWARDING_HEADERS = ("HTTP_FORWARDED", "HTTP_X_FORWARDED_FOR", "HTTP_X_FORWARDED_HOST", "HTTP_X_REAL_IP")
LOOPBACK_NAMES = frozenset({"localhost"})


class LaunchCredential(Enum):
    """What a control-route call without a valid Bearer token carries."""

    TOKEN_OK = "token_ok"
    TOKEN_WRONG = "token_wrong"  # a token was sent and does not match (or none is configured)
    NATIVE_LOOPBACK = "native_loopback"
    NONE = "none"


def install_mode() -> bool:
    return settings.NEKOMEM_NEKO_ROOT is not None


def launch_token() -> str:
    """``NEKO_AUTOSTART_CSRF_TOKEN``, else ``NEKO_INSTANCE_ID``; empty when the launcher set neither."""
    return settings.NEKO_AUTOSTART_CSRF_TOKEN or settings.NEKO_INSTANCE_ID


def _loopback_address(text: str) -> bool:
    try:
        return ipaddress.ip_address(text.split("%")[0]).is_loopback
    except ValueError:
        return False


def _host_name(host: str) -> str:
    """The name part of a ``Host`` header: ``[::1]:48912`` → ``::1``, ``127.0.0.1:48912`` → ``127.0.0.1``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    if host.count(":") == 1:
        return host.split(":", 1)[0]
    return host


def is_native_loopback(request: HttpRequest) -> bool:
    """A loopback peer addressing a loopback Host, with nothing a browser or a proxy would add."""
    meta = request.META
    if not _loopback_address(meta.get("REMOTE_ADDR", "")):
        return False
    host = _host_name(meta.get("HTTP_HOST", ""))
    if host not in LOOPBACK_NAMES and not _loopback_address(host):
        return False
    if "HTTP_ORIGIN" in meta or meta.get("HTTP_COOKIE"):
        return False
    if any(key.startswith("HTTP_SEC_FETCH_") for key in meta):
        return False
    return not any(header in meta for header in FORWARDING_HEADERS)


def launch_credential(request: HttpRequest) -> LaunchCredential:
    supplied = request.META.get(CSRF_HEADER)
    if supplied is not None:
        token = launch_token()
        if token and hmac.compare_digest(supplied.strip().encode(), token.encode()):
            return LaunchCredential.TOKEN_OK
        return LaunchCredential.TOKEN_WRONG
    if is_native_loopback(request):
        return LaunchCredential.NATIVE_LOOPBACK
    return LaunchCredential.NONE


def reported_instance_id(own: str) -> str:
    """The id ``/health`` answers: the launcher's when it set one (either mode), else this process's."""
    return settings.NEKO_INSTANCE_ID or own
