"""Readiness, restricted mode and the storage block: the leaf primitive every writer checks.

A process is "initializing" until its startup work (``nekomem.runtime.startup``: migrations applied,
the startup hooks such as the journal's reconcile passed) has finished; storage can also be blocked
for every process through the database row. This module imports nothing of the kernel's domain (no
journal, no characters): the locks import it, so it must stay below them.

While storage is blocked (``/internal/storage/startup/block``, a restore or a move of the memory
folder in progress) nothing of nekomem writes: requests get 409 (the middleware), and every piece of
background work (a django-q2 task, a schedule tick, an outbox op, a job, a file writer) runs inside
``storage_writer``, which refuses to start it while the block holds and makes ``lock_character``
stop work already in flight at its next write (``StorageBlocked``). ``continue``
(``nekomem.runtime.startup.storage_release``) runs the registered continue hooks, lifts the block
and runs the resume hooks (the journal enqueues what waited).
"""

from __future__ import annotations

import functools
import logging
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import F

from nekomem.runtime.caches import process_caches_forget
from nekomem.runtime.models import StorageState
from nekomem.statements import column

logger = logging.getLogger(__name__)

INSTANCE_ID = uuid.uuid4().hex
RUNTIME_INITIALIZING = "runtime_initializing"
BLOCKED_AFTER_INIT = "storage_startup_blocked_after_init"
# The waiting reason of background work held back by the block (the status view shows it).
STORAGE_BLOCKED = "storage_blocked"

_ready = threading.Event()


@dataclass(frozen=True)
class Block:
    reason: str


def is_ready() -> bool:
    return _ready.is_set()


def set_initializing() -> None:
    _ready.clear()


def mark_ready() -> None:
    """The startup work passed (``nekomem.runtime.startup``): requests are served from now on."""
    _ready.set()


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


# --- the storage block for background writers -----------------------------------------------------


class StorageBlocked(Exception):
    """Storage was blocked while background work ran: it stops before its next write and waits
    (without spending an attempt) until ``continue``."""

    def __init__(self) -> None:
        super().__init__(STORAGE_BLOCKED)
        self.reason = STORAGE_BLOCKED


_in_writer: ContextVar[bool] = ContextVar("nekomem_storage_writer", default=False)
_exempt: ContextVar[bool] = ContextVar("nekomem_storage_exempt", default=False)


def storage_writes_allowed() -> bool:
    """False while storage is blocked (in any process: the database row), True otherwise.

    One primary-key read, not cached: a block made through any worker applies at once. The code
    ``continue`` runs before it lifts the block (its hooks) is allowed.
    """
    if _exempt.get():
        return True
    with connection.cursor() as cursor:
        cursor.execute(_storage_row_sql(connection.vendor), [1])
        row = cursor.fetchone()
    return not (row and row[0])


def storage_writes_check() -> None:
    """Inside background work (``storage_writer``): raise ``StorageBlocked`` once storage is blocked.

    ``lock_character`` calls it, so work in flight when the block arrives stops at its next write.
    Requests (checked once by the middleware) and commands run outside and pay nothing.
    """
    if _in_writer.get() and not storage_writes_allowed():
        raise StorageBlocked()


@contextmanager
def storage_writer() -> Iterator[bool]:
    """Run background work: yields False, and the work must not start, while storage is blocked.

    Within it ``storage_writes_check`` (every ``lock_character``) stops the work once a block
    arrives. Every django-q2 task, schedule tick, outbox op and job runs inside one; a file writer
    of the memory folder uses it the same way.
    """
    if _in_writer.get():
        yield True  # nested: the outer one checked
        return
    if not storage_writes_allowed():
        yield False
        return
    token = _in_writer.set(True)
    try:
        yield True
    finally:
        _in_writer.reset(token)


@contextmanager
def storage_writes_exempt() -> Iterator[None]:
    """Writes that belong to lifting the block (the continue hooks) go through while it holds."""
    token = _exempt.set(True)
    try:
        yield
    finally:
        _exempt.reset(token)


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
