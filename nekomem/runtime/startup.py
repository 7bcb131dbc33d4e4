"""Startup and ``continue``: the orchestration around the storage block (``nekomem.runtime.state``).

The runtime knows no app's work: what must pass before a process serves (the journal's reconcile of
the event logs), what ``continue`` does before the block lifts (a re-read of files changed from
outside) and what it restarts afterwards (the journal's sweep of due jobs and outbox ops) are hooks
that the apps register from their ``AppConfig.ready()``. So the storage block itself stays a leaf
that the locks and the journal import, and this module imports neither.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from django_q.models import Schedule

from nekomem.runtime.models import StorageState
from nekomem.runtime.state import (
    RUNTIME_INITIALIZING,
    Block,
    is_ready,
    mark_ready,
    storage_writes_exempt,
)

logger = logging.getLogger(__name__)

# A reread hook takes the names to re-read (None: all) and returns what the caller reports of it, if
# anything (``continue`` puts it in its answer under the hook's name).
RereadHook = Callable[[Collection[str] | None], Mapping[str, object] | None]

_startup_lock = threading.Lock()
_startup_error: str = ""
_startup_hooks: dict[str, Callable[[], object]] = {}
_continue_hooks: list[Callable[[], object]] = []
_resume_hooks: list[Callable[[], object]] = []
_reread_hooks: dict[str, RereadHook] = {}


def register_startup_hook(name: str, hook: Callable[[], object]) -> None:
    """``hook()`` runs once per process before it is ready (after the schema check), in registration
    order; a ``DatabaseError`` from it keeps the process initializing. Register from ``ready()``."""
    _startup_hooks[name] = hook


def register_continue_hook(hook: Callable[[], object]) -> None:
    """``hook()`` runs on ``continue``, while the block still holds and every other writer waits (it
    may write: that is what it is for), e.g. taking in files restored from outside."""
    if hook not in _continue_hooks:
        _continue_hooks.append(hook)


def unregister_continue_hook(hook: Callable[[], object]) -> None:
    if hook in _continue_hooks:
        _continue_hooks.remove(hook)


def register_resume_hook(hook: Callable[[], object]) -> None:
    """``hook()`` runs once the block has lifted, to enqueue the work that waited for it."""
    if hook not in _resume_hooks:
        _resume_hooks.append(hook)


def register_reread_hook(name: str, hook: RereadHook) -> None:
    """``hook(names)`` takes in what was changed from outside (the install's memory folder):
    ``continue`` and ``/reload`` call it for everything, ``/release_character`` for one name."""
    _reread_hooks[name] = hook


def unregister_reread_hook(name: str) -> None:
    _reread_hooks.pop(name, None)


def rereads_run(*, names: Collection[str] | None = None) -> dict[str, Mapping[str, object]]:
    """Run every reread hook; what each reported, by its name."""
    reported: dict[str, Mapping[str, object]] = {}
    for name, hook in list(_reread_hooks.items()):
        answer = hook(names)
        if answer is not None:
            reported[name] = answer
    return reported


def pending_migrations() -> int:
    executor = MigrationExecutor(connection)
    return len(executor.migration_plan(executor.loader.graph.leaf_nodes()))


def startup_run() -> bool:
    """Check the schema and run the startup hooks; mark this process ready when all pass."""
    global _startup_error
    with _startup_lock:
        if is_ready():
            return True
        try:
            missing = pending_migrations()
            if missing:
                _startup_error = f"{missing} migrations not applied"
                logger.error("startup: %s; run `python manage.py migrate`", _startup_error)
                return False
            for hook in list(_startup_hooks.values()):
                hook()
        except DatabaseError as exc:
            _startup_error = f"database unavailable: {type(exc).__name__}"
            logger.exception("startup failed")
            return False
        _startup_error = ""
        mark_ready()
        return True


def startup_error() -> str:
    return _startup_error


def storage_release() -> Block | None:
    """Release the block when storage is safe; returns the remaining block otherwise.

    The continue hooks run first, while every other writer still waits (they may write: that is
    what they are for); then the block lifts and the resume hooks enqueue the work that waited.
    """
    if not startup_run():
        return Block(startup_error() or RUNTIME_INITIALIZING)
    with storage_writes_exempt():
        for hook in list(_continue_hooks):
            try:
                hook()
            except Exception:
                # A hook reports its own refusals; one that crashed must not keep the server in 409.
                logger.exception("continue hook %s failed", getattr(hook, "__name__", hook))
    StorageState.objects.update_or_create(pk=1, defaults={"blocked": False, "reason": ""})
    _writers_resume()
    return None


def _writers_resume() -> None:
    """Every schedule's next tick (the ticks skipped while blocked) on the scheduler's next pass, and
    the resume hooks (the journal's due jobs and outbox ops) at once."""
    try:
        Schedule.objects.filter(name__startswith="nekomem:").update(next_run=timezone.now())
        for hook in list(_resume_hooks):
            hook()
    except Exception:
        # The block is lifted; the every-minute sweep and the schedules pick the work up anyway.
        logger.exception("could not enqueue the work that waited for the storage block")


# --- the serving process (``manage.py serve`` / ``prestart``), not its workers ------------------------------


@dataclass(frozen=True)
class ServerHook:
    """An app's part of the serving process: ``prestart`` runs in ``manage.py prestart``;
    ``before_serving`` before any worker can serve (a ``DatabaseError`` there is logged: the workers'
    own start-up reports a missing schema); ``background`` starts a loop of the serving process and
    returns the event that stops it, or None when it has nothing to run."""

    name: str
    prestart: Callable[[], object] | None = None
    before_serving: Callable[[], object] | None = None
    background: Callable[[], threading.Event | None] | None = None


_server_hooks: dict[str, ServerHook] = {}


def register_server_hook(hook: ServerHook) -> None:
    _server_hooks[hook.name] = hook


def server_hooks() -> list[ServerHook]:
    return list(_server_hooks.values())
