from __future__ import annotations

import logging
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from install import install_root
from install.sync import characters_sync_if_changed
from nekomem.runtime.state import current_block

logger = logging.getLogger(__name__)


class InstallSyncMiddleware:
    """Install mode: before each request, apply ``characters.json`` if it changed (one stat otherwise).

    So the request after an edit of a card already sees it. Not while storage is blocked: the main
    server may be moving the folder, and nothing may be written then.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if install_root() is not None and current_block() is None:
            try:
                characters_sync_if_changed()
            except Exception:  # the request goes on with what is stored; the next one tries again
                logger.exception("install characters.json could not be applied")
        return self.get_response(request)
