"""Background work waits behind the requests of its process (nekomem/runtime/foreground.py)."""

from __future__ import annotations

import threading

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from nekomem.runtime.foreground import ForegroundRequestMiddleware, foreground_wait


def test_a_waiter_goes_on_when_the_last_request_ends() -> None:
    entered, release = threading.Event(), threading.Event()

    def answer(request: object) -> HttpResponse:
        entered.set()
        release.wait(10)
        return HttpResponse("ok")

    middleware = ForegroundRequestMiddleware(answer)
    assert foreground_wait(0) is True
    serving = threading.Thread(target=middleware, args=(RequestFactory().get("/health"),))
    serving.start()
    assert entered.wait(10)
    assert foreground_wait(0) is False  # a request under way
    waited: list[bool] = []
    waiter = threading.Thread(target=lambda: waited.append(foreground_wait(10)))
    waiter.start()
    release.set()
    serving.join(10)
    waiter.join(10)
    assert waited == [True]
    assert foreground_wait(0) is True


def test_a_request_that_fails_is_no_longer_counted() -> None:
    def answer(request: object) -> HttpResponse:
        raise RuntimeError("boom")

    middleware = ForegroundRequestMiddleware(answer)
    with pytest.raises(RuntimeError):
        middleware(RequestFactory().get("/health"))
    assert foreground_wait(0) is True
