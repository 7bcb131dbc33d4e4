"""The server's own 500 answer: JSON, never Django's HTML page, and 503 while storage is down."""

from __future__ import annotations

import logging
import sys

from django.http import HttpRequest, HttpResponse

from nekomem.errors import storage_unavailable
from nekomem.http import json_error

logger = logging.getLogger(__name__)


def server_error(request: HttpRequest) -> HttpResponse:
    """``handler500``: Django calls it while handling the exception, so ``sys.exc_info`` names it."""
    exc = sys.exc_info()[1]
    if storage_unavailable(exc):
        return json_error(
            "storage is unavailable, try again shortly", status=503, error_code="storage_unavailable"
        )
    return json_error("internal error", status=500, error_code="server_error")
