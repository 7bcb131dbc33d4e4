"""Hands committed outbox ops to the broker in small batches, from one thread per process.

Every chat turn commits an op. Enqueuing each as its own django-q2 task costs the request a broker
round trip and the cluster a full task cycle (pull, unpickle, hand to a worker, report back), which
under load was most of the cluster's CPU per turn. The dispatcher gathers the ops committed within
``NEKOMEM_OUTBOX_BATCH_MS`` and enqueues them as one task; each op is still claimed, run, retried
and dead-lettered on its own.

An op id waiting here is already durable: if the process dies first, the startup replay and the
periodic sweep enqueue it, exactly as when the broker is down. With a window of 0, or when
django-q2 runs tasks synchronously (tests), each op is enqueued at once in the caller's thread.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from uuid import UUID

from django.conf import settings

from nekomem.journal.broker import outbox_ops_enqueue

logger = logging.getLogger(__name__)

Send = Callable[[Sequence[UUID]], None]


class OutboxDispatcher:
    """Collects op ids and calls ``send`` with each window's worth from a daemon thread."""

    def __init__(self, *, send: Send, window_seconds: float) -> None:
        self._send = send
        self._window = window_seconds
        self._lock = threading.Lock()
        self._pending: list[UUID] = []
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._owner_pid = 0

    def add(self, op_id: UUID) -> None:
        if self._window <= 0:
            self._send([op_id])
            return
        with self._lock:
            self._pending.append(op_id)
            # A forked child process inherits the object but not the thread.
            if self._thread is None or self._owner_pid != os.getpid() or not self._thread.is_alive():
                self._owner_pid = os.getpid()
                self._thread = threading.Thread(target=self._run, name="outbox-dispatch", daemon=True)
                self._thread.start()
        self._wake.set()

    def flush(self) -> int:
        """Send whatever is pending now; returns how many ops were sent."""
        with self._lock:
            batch, self._pending = self._pending, []
            self._wake.clear()
        if batch:
            try:
                self._send(batch)
            except Exception:  # the sweep re-enqueues them; the thread must live on
                logger.exception("could not enqueue %d outbox ops; the sweep will retry them", len(batch))
        return len(batch)

    def _run(self) -> None:
        while True:
            self._wake.wait()
            time.sleep(self._window)  # let the rest of the window's ops arrive
            self.flush()


_dispatcher: OutboxDispatcher | None = None
_dispatcher_lock = threading.Lock()


def _send_to_broker(op_ids: Sequence[UUID]) -> None:
    outbox_ops_enqueue(op_ids=op_ids)


def outbox_dispatcher() -> OutboxDispatcher:
    """The process's dispatcher, created on first use from the settings."""
    global _dispatcher
    if _dispatcher is None:
        with _dispatcher_lock:
            if _dispatcher is None:
                synchronous = bool(settings.Q_CLUSTER.get("sync"))
                window = 0.0 if synchronous else settings.NEKOMEM_OUTBOX_BATCH_MS / 1000
                _dispatcher = OutboxDispatcher(send=_send_to_broker, window_seconds=window)
                # A clean shutdown (the server's graceful stop, Ctrl-C) enqueues what is still waiting.
                atexit.register(_dispatcher.flush)
    return _dispatcher
