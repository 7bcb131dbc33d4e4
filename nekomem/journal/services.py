"""Writes to the event log, the applied sentinel and the outbox."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from uuid import UUID

from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from nekomem.characters.locks import lock_character
from nekomem.journal.events import check_event_type
from nekomem.journal.models import AppliedSentinel, Event, OutboxOp
from nekomem.journal.registry import OutboxWait, event_handler_for, outbox_steps_for

logger = logging.getLogger(__name__)

OUTBOX_MAX_ATTEMPTS = 5
OUTBOX_LEASE = timedelta(minutes=10)
OUTBOX_TASK = "nekomem.journal.tasks.outbox_op_run"


def _require_atomic(what: str) -> None:
    if not connection.in_atomic_block:
        raise RuntimeError(f"{what} must run inside the transaction of the change it belongs to")


def event_append(*, character_id: int, event_type: str, payload: dict[str, Any]) -> Event:
    """Append one event and mark it applied: the caller changes the view in the same transaction."""
    _require_atomic("event_append")
    check_event_type(event_type)
    event = Event.objects.create(
        character_id=character_id, type=event_type, ts=timezone.now(), payload=payload
    )
    _sentinel_advance(character_id=character_id, event=event)
    return event


def _sentinel_advance(*, character_id: int, event: Event) -> bool:
    """Compare-and-set: the sentinel only ever moves forward."""
    sentinel, _ = AppliedSentinel.objects.get_or_create(character_id=character_id)
    moved = AppliedSentinel.objects.filter(
        Q(last_applied_seq__isnull=True) | Q(last_applied_seq__lt=event.seq), pk=sentinel.pk
    ).update(last_applied_seq=event.seq, last_applied_event_id=event.event_id, ts=timezone.now())
    return moved == 1


@dataclass
class ReconcileReport:
    applied: int = 0
    paused: dict[str, str] = field(default_factory=dict)


def events_reconcile(*, character_id: int | None = None) -> ReconcileReport:
    """Replay events after each character's sentinel through the registered handlers.

    Events are normally applied in the transaction that wrote them, so this finds work only
    after an import, a restore, or a crash between the steps of a multi-transaction job. An event
    type with no handler pauses that character's replay, leaving the sentinel where it was.
    """
    report = ReconcileReport()
    pending = Event.objects.all()
    if character_id is not None:
        pending = pending.filter(character_id=character_id)
    for cid in pending.values_list("character_id", flat=True).distinct().order_by("character_id"):
        sentinel = AppliedSentinel.objects.filter(character_id=cid).first()
        after = sentinel.last_applied_seq if sentinel and sentinel.last_applied_seq is not None else 0
        for event in Event.objects.filter(character_id=cid, seq__gt=after).order_by("seq").iterator():
            handler = event_handler_for(event.type)
            if handler is None:
                report.paused[str(cid)] = f"no handler for {event.type} (event {event.event_id})"
                logger.warning("reconcile paused character=%s type=%s", cid, event.type)
                break
            with transaction.atomic():
                lock_character(cid)
                handler(cid, event.payload)
                _sentinel_advance(character_id=cid, event=event)
            report.applied += 1
    return report


def outbox_op_register(*, character_id: int, op_type: str, payload: dict[str, Any]) -> OutboxOp:
    """Register an op inside the caller's transaction; its task is enqueued only after commit."""
    _require_atomic("outbox_op_register")
    op = OutboxOp.objects.create(character_id=character_id, type=op_type, payload=payload)
    op_id = op.op_id
    transaction.on_commit(lambda: outbox_op_enqueue(op_id=op_id))
    return op


_broker_lock = threading.Lock()
_broker: Any = None


def _outbox_broker() -> Any:
    """One django-q2 broker per process, shared by its threads.

    ``async_task`` without a broker builds a new one per call; on Redis that is a new client, a new
    TCP connection and its handshake for every chat turn. The Redis client's pool is thread-safe
    and notices a fork; the ORM broker works through Django's per-thread connections.
    """
    global _broker
    if _broker is None:
        with _broker_lock:
            if _broker is None:
                from django_q.brokers import get_broker

                _broker = get_broker()
    return _broker


def outbox_op_enqueue(*, op_id: UUID) -> None:
    from django_q.tasks import async_task

    try:
        async_task(
            OUTBOX_TASK,
            str(op_id),
            task_name=f"outbox-{op_id}",
            group="outbox",
            broker=_outbox_broker(),
            # The op row records completion (status, done_at), so a successful run is not also saved
            # as a django-q result: with save_limit that save reads back every kept result under a
            # row lock to prune one, most of the cluster's CPU per turn. Failures are still saved.
            save=False,
        )
    except Exception:
        # The op is durable; the periodic sweep enqueues it again, so a broker hiccup loses nothing.
        logger.exception("could not enqueue outbox op %s; the sweep will retry it", op_id)


def _claim(op_id: UUID) -> bool:
    now = timezone.now()
    return (
        OutboxOp.objects.filter(op_id=op_id, status=OutboxOp.Status.PENDING)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .update(lease_until=now + OUTBOX_LEASE)
        == 1
    )


def outbox_op_execute(*, op_id: UUID) -> str:
    """Run one op's steps once. Returns the op's status afterwards (or "busy" / "missing")."""
    op = OutboxOp.objects.filter(op_id=op_id).first()
    if op is None:
        return "missing"
    if op.status != OutboxOp.Status.PENDING:
        return op.status
    if not _claim(op_id):
        return "busy"
    try:
        for _name, step in outbox_steps_for(op.type):
            step(op.character_id, op.payload)
    except OutboxWait as wait:
        OutboxOp.objects.filter(op_id=op_id).update(last_error=f"waiting: {wait.reason}", lease_until=None)
        return "waiting"
    except Exception as exc:  # every failure counts as one attempt; the op itself stays durable
        return _outbox_op_fail(op_id=op_id, error=exc)
    OutboxOp.objects.filter(op_id=op_id).update(
        status=OutboxOp.Status.DONE, done_at=timezone.now(), lease_until=None, last_error=""
    )
    return OutboxOp.Status.DONE


def _outbox_op_fail(*, op_id: UUID, error: Exception) -> str:
    message = f"{type(error).__name__}: {error}"[:2000]
    OutboxOp.objects.filter(op_id=op_id).update(
        attempts=F("attempts") + 1, last_error=message, lease_until=None
    )
    dead = OutboxOp.objects.filter(op_id=op_id, attempts__gte=OUTBOX_MAX_ATTEMPTS).update(
        status=OutboxOp.Status.DEAD, done_at=timezone.now()
    )
    logger.warning(
        "outbox op %s failed (%s)%s", op_id, type(error).__name__, "; dead-lettered" if dead else ""
    )
    return OutboxOp.Status.DEAD if dead else OutboxOp.Status.PENDING


def outbox_ops_release_leases() -> int:
    """At startup no worker of ours is running yet, so every lease is stale."""
    return OutboxOp.objects.filter(status=OutboxOp.Status.PENDING, lease_until__isnull=False).update(
        lease_until=None
    )


def outbox_ops_requeue(*, older_than: timedelta = timedelta(seconds=0)) -> int:
    """Enqueue every pending op with no live lease (startup replay and the periodic sweep)."""
    now = timezone.now()
    ops = OutboxOp.objects.filter(status=OutboxOp.Status.PENDING, updated_at__lte=now - older_than).filter(
        Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    )
    # Materialise the ids first: the ORM broker closes expired connections on every enqueue, which
    # would kill an open server-side cursor mid-loop.
    op_ids = list(ops.values_list("op_id", flat=True))
    for op_id in op_ids:
        outbox_op_enqueue(op_id=op_id)
    return len(op_ids)
