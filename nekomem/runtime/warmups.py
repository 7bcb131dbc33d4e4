"""Work a server process does as it starts (a layer registers it from its AppConfig.ready).

The WSGI entry point runs the ``before_serving`` ones first, in the worker's own thread: a worker
takes no request until they are done (the listening socket's backlog holds what arrives meanwhile),
so each must be short and bounded. The others run on one background thread once it serves.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.db import connection

from nekomem.embeddings import embedder_within

logger = logging.getLogger(__name__)

_warm_ups: dict[str, Callable[[], object]] = {}
_before_serving: dict[str, Callable[[], object]] = {}
# Before serving, after every other one whatever the apps' order (a wait that the others overlap).
_last_before_serving: dict[str, Callable[[], object]] = {}


def register_warm_up(
    name: str, warm_up: Callable[[], object], *, before_serving: bool = False, last: bool = False
) -> None:
    """``last`` (with ``before_serving``): run after every other warm-up before serving."""
    if last and not before_serving:
        raise ValueError("only a warm-up before serving can be the last one")
    (_last_before_serving if last else _before_serving if before_serving else _warm_ups)[name] = warm_up


def before_serving_order() -> list[str]:
    """The names of the warm-ups before serving, in the order they run."""
    return [*_before_serving, *_last_before_serving]


def _run_each(warm_ups: dict[str, Callable[[], object]]) -> float:
    """Run each warm-up in turn (a failing one is logged and skipped); the seconds it all took."""
    started = time.monotonic()
    try:
        for name, warm_up in list(warm_ups.items()):
            try:
                warm_up()
            except Exception:
                logger.exception("warm-up %s failed", name)
    finally:
        connection.close()
    return time.monotonic() - started


def start_model_load() -> None:
    """Start loading the embedding model on a thread of its own, and return at once."""
    embedder_within(0.0)


def model_load_wait() -> bool:
    """Wait for the model load ``start_model_load`` began, at most
    ``EMBEDDING_LOAD_BEFORE_SERVING_SECONDS``: run last before serving, it overlaps the warm-ups before
    it, and a worker's first queries rank with vectors instead of waiting for them inside the request.
    True when the model is ready (False: still loading, failed, or vectors are off)."""
    started = time.monotonic()
    ready = embedder_within(settings.EMBEDDING_LOAD_BEFORE_SERVING_SECONDS) is not None
    logger.info(
        "embedding model %s before serving (waited %.2fs)",
        "ready" if ready else "not ready",
        time.monotonic() - started,
    )
    return ready


def urlconf_warm_up() -> None:
    """Import the URLconf (every layer's views), which Django otherwise does inside the first request."""
    from django.urls import get_resolver

    get_resolver().url_patterns  # noqa: B018 - the import is the point


def warm_ups_before_serving() -> None:
    """Run every ``before_serving`` warm-up now, in turn; a failing one is logged and skipped."""
    logger.info(
        "warm-ups before serving done in %.2fs", _run_each({**_before_serving, **_last_before_serving})
    )


def warm_ups_start() -> threading.Thread:
    """Run every registered warm-up in turn on a daemon thread; a failing one is logged and skipped."""

    def run() -> None:
        # Operators (and the benchmarks' "at rest" figures) wait for this line.
        logger.info("warm-ups done in %.1fs", _run_each(_warm_ups))

    thread = threading.Thread(target=run, name="warm-ups", daemon=True)
    thread.start()
    return thread
