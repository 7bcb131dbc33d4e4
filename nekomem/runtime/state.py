"""Readiness and restricted mode.

A process is "initializing" until its startup work (migrations applied, events reconciled) has
finished; storage can also be blocked for every process through the database row.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass

from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor

from nekomem.runtime.models import StorageState

logger = logging.getLogger(__name__)

INSTANCE_ID = uuid.uuid4().hex
RUNTIME_INITIALIZING = "runtime_initializing"
BLOCKED_AFTER_INIT = "storage_startup_blocked_after_init"

_ready = threading.Event()
_startup_lock = threading.Lock()
_startup_error: str = ""


@dataclass(frozen=True)
class Block:
    reason: str


def is_ready() -> bool:
    return _ready.is_set()


def set_initializing() -> None:
    _ready.clear()


def pending_migrations() -> int:
    executor = MigrationExecutor(connection)
    return len(executor.migration_plan(executor.loader.graph.leaf_nodes()))


def startup_run() -> bool:
    """Check the schema and reconcile the event logs; mark this process ready when both pass."""
    global _startup_error
    from nekomem.journal.services import events_reconcile

    with _startup_lock:
        if _ready.is_set():
            return True
        try:
            missing = pending_migrations()
            if missing:
                _startup_error = f"{missing} migrations not applied"
                logger.error("startup: %s; run `python manage.py migrate`", _startup_error)
                return False
            report = events_reconcile()
            logger.info("startup: reconciled %d events, paused=%d", report.applied, len(report.paused))
        except DatabaseError as exc:
            _startup_error = f"database unavailable: {type(exc).__name__}"
            logger.exception("startup failed")
            return False
        _startup_error = ""
        _ready.set()
        return True


def startup_error() -> str:
    return _startup_error


# Every request checks the shared block flag; a short per-process cache keeps that off the hot
# path. A block set through this process applies at once, through another within this interval.
BLOCK_CHECK_INTERVAL_SECONDS = 1.0
_block_cache: tuple[float, Block | None] = (0.0, None)


def current_block() -> Block | None:
    """The reason requests are refused right now, or None when the server is open."""
    global _block_cache
    if not _ready.is_set():
        return Block(RUNTIME_INITIALIZING)
    checked_at, cached = _block_cache
    now = time.monotonic()
    if now - checked_at < BLOCK_CHECK_INTERVAL_SECONDS:
        return cached
    state = StorageState.objects.filter(pk=1).values_list("blocked", "reason").first()
    block = Block(state[1] or BLOCKED_AFTER_INIT) if state and state[0] else None
    _block_cache = (now, block)
    return block


def _forget_block_cache() -> None:
    global _block_cache
    _block_cache = (0.0, None)


def storage_block(*, reason: str) -> None:
    StorageState.objects.update_or_create(pk=1, defaults={"blocked": True, "reason": reason[:200]})
    _forget_block_cache()


def storage_release() -> Block | None:
    """Release the block when storage is safe; returns the remaining block otherwise."""
    if not startup_run():
        return Block(startup_error() or RUNTIME_INITIALIZING)
    StorageState.objects.update_or_create(pk=1, defaults={"blocked": False, "reason": ""})
    _forget_block_cache()
    return None
