"""Hands work to django-q2 through one broker per process: outbox ops (up to ``OUTBOX_BATCH_MAX`` a
task), kernel jobs and the backfill's next tick all go through ``task_enqueue``."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any
from uuid import UUID

logger = logging.getLogger(__name__)

OUTBOX_TASK = "nekomem.journal.tasks.outbox_ops_run"
# Ops in one django-q2 task. Small enough that a batch of LLM-calling steps (per-turn extraction
# with powerful memory off) fits the task timeout; large enough for a busy window of chat turns.
OUTBOX_BATCH_MAX = 20

_broker_lock = threading.Lock()
_broker: Any = None


def process_broker() -> Any:
    """One django-q2 broker per process, shared by its threads.

    ``async_task`` without a broker builds a new one per call; on Redis that is a new client, a new
    TCP connection and its handshake for every chat turn (and for every job a turn requests, such
    as the window's compression). The Redis client's pool is thread-safe and notices a fork; the ORM
    broker works through Django's per-thread connections.
    """
    global _broker
    if _broker is None:
        with _broker_lock:
            if _broker is None:
                from django_q.brokers import get_broker

                _broker = get_broker()
    return _broker


def task_enqueue(func: str, *args: Any, **options: Any) -> None:
    """``async_task`` through this process's broker; raises what the broker raises."""
    from django_q.tasks import async_task

    async_task(func, *args, broker=process_broker(), **options)


def outbox_ops_enqueue(*, op_ids: Sequence[UUID]) -> None:
    """Enqueue django-q2 tasks that run these ops, up to ``OUTBOX_BATCH_MAX`` ops a task."""
    for start in range(0, len(op_ids), OUTBOX_BATCH_MAX):
        chunk = [str(op_id) for op_id in op_ids[start : start + OUTBOX_BATCH_MAX]]
        try:
            task_enqueue(
                OUTBOX_TASK,
                chunk,
                task_name=f"outbox-{chunk[0]}" + (f"+{len(chunk) - 1}" if len(chunk) > 1 else ""),
                group="outbox",
                # The op row records completion (status, finished_at), so a successful run is not
                # also saved as a django-q result: with save_limit that save reads back every kept
                # result under a row lock to prune one. Failures are still saved.
                save=False,
            )
        except Exception:
            # The ops are durable; the periodic sweep enqueues them again, so a broker hiccup loses
            # nothing.
            logger.exception("could not enqueue outbox ops %s; the sweep will retry them", chunk)
