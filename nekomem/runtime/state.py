"""Readiness and restricted mode.

A process is "initializing" until its startup work (migrations applied, events reconciled) has
finished; storage can also be blocked for every process through the database row.
"""

from __future__ import annotations

import functools
import logging
import threading
import uuid
from dataclasses import dataclass

from django.db import DatabaseError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.db.models import F

from nekomem.runtime.caches import process_caches_forget
from nekomem.runtime.models import StorageState
from nekomem.statements import column

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


# The storage row is read once per request, uncached: a block or release made through any worker
# applies to the next request of every worker, so no write slips in after ``block`` has answered.
# The same read carries the reload generation (``/reload``), so it costs one primary-key SELECT.
_seen_generation: int | None = None


def current_block() -> Block | None:
    """The reason requests are refused right now, or None when the server is open.

    Also drops this process's caches when another process asked for a reload since the last check.
    """
    if not _ready.is_set():
        return Block(RUNTIME_INITIALIZING)
    with connection.cursor() as cursor:
        cursor.execute(_storage_row_sql(connection.vendor), [1])
        row = cursor.fetchone()
    blocked, reason, generation = row or (False, "", 0)  # no row yet: open, never reloaded
    _follow_generation(generation)
    return Block(reason or BLOCKED_AFTER_INIT) if blocked else None


@functools.cache
def _storage_row_sql(vendor: str) -> str:
    """The one read every request makes, as SQL built once: the ORM spent about 40 times the
    database's own time building this query anew for each request."""
    quote = connection.ops.quote_name
    columns = ", ".join(quote(column(StorageState, name)) for name in ("blocked", "reason", "generation"))
    table = quote(StorageState._meta.db_table)
    return f"SELECT {columns} FROM {table} WHERE {quote(column(StorageState, 'id'))} = %s"


def _follow_generation(generation: int) -> None:
    global _seen_generation
    if _seen_generation is None:
        _seen_generation = generation  # this process's caches are younger than any earlier reload
    elif generation != _seen_generation:
        _seen_generation = generation
        process_caches_forget()
        logger.info("reload: per-process caches dropped (generation %d)", generation)


def storage_block(*, reason: str) -> None:
    StorageState.objects.update_or_create(pk=1, defaults={"blocked": True, "reason": reason[:200]})


def storage_release() -> Block | None:
    """Release the block when storage is safe; returns the remaining block otherwise."""
    if not startup_run():
        return Block(startup_error() or RUNTIME_INITIALIZING)
    StorageState.objects.update_or_create(pk=1, defaults={"blocked": False, "reason": ""})
    return None


def storage_reload() -> int:
    """Ask every process to drop its caches and re-read its configuration; returns the new generation.

    This process follows at once; every other one before it serves its next request.
    """
    global _seen_generation
    with transaction.atomic():
        StorageState.objects.get_or_create(pk=1)
        StorageState.objects.filter(pk=1).update(generation=F("generation") + 1)
        generation = StorageState.objects.filter(pk=1).values_list("generation", flat=True).get()
    _seen_generation = generation
    process_caches_forget()
    return generation
