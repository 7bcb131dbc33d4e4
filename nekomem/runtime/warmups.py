"""Work a server process does once it is up, off the request path (a layer registers it from its
AppConfig.ready; the WSGI entry point runs them on one background thread after startup)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from django.db import connection

logger = logging.getLogger(__name__)

_warm_ups: dict[str, Callable[[], None]] = {}


def register_warm_up(name: str, warm_up: Callable[[], None]) -> None:
    _warm_ups[name] = warm_up


def warm_ups_start() -> threading.Thread:
    """Run every registered warm-up in turn on a daemon thread; a failing one is logged and skipped."""

    def run() -> None:
        started = time.monotonic()
        try:
            for name, warm_up in list(_warm_ups.items()):
                try:
                    warm_up()
                except Exception:
                    logger.exception("warm-up %s failed", name)
        finally:
            connection.close()
        # Operators (and the benchmarks' "at rest" figures) wait for this line.
        logger.info("warm-ups done in %.1fs", time.monotonic() - started)

    thread = threading.Thread(target=run, name="warm-ups", daemon=True)
    thread.start()
    return thread
