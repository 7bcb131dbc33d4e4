"""The requests this process is answering now, for background work of the same process that can wait.

A CPU-heavy step on a background thread (a knowledge index rebuilt after an import) holds the GIL
against the requests: each one then runs in turns with it and takes about twice its time. Such work
calls ``foreground_wait`` between small slices: it goes on at once when no request is under way,
else when the last one ends, but never waits longer than its caller says, so it always progresses.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

_lock = threading.Lock()
_idle = threading.Condition(_lock)
_under_way = 0


def foreground_wait(timeout: float) -> bool:
    """Wait until no request of this process is under way, at most ``timeout`` seconds; whether none
    is. Never call it from a request's own thread (it would wait for itself)."""
    with _lock:
        return _idle.wait_for(lambda: _under_way == 0, timeout)


class ForegroundRequestMiddleware:
    """Counts the requests under way (first in the list, so it spans all the others)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        global _under_way
        with _lock:
            _under_way += 1
        try:
            return self.get_response(request)
        finally:
            with _lock:
                _under_way -= 1
                if _under_way == 0:
                    _idle.notify_all()
