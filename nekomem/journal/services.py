"""Writes to the event log, the applied sentinel and the outbox."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any
from uuid import UUID, uuid4

from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from nekomem.characters.locks import lock_character
from nekomem.journal.events import check_event_type
from nekomem.journal.models import AppliedSentinel, Event, OutboxOp
from nekomem.journal.registry import OutboxWait, event_handler_for, outbox_steps_for
from nekomem.statements import column, database, insert_select_sql, model_field

logger = logging.getLogger(__name__)

OUTBOX_MAX_ATTEMPTS = 5
OUTBOX_LEASE = timedelta(minutes=10)
OUTBOX_TASK = "nekomem.journal.tasks.outbox_ops_run"
# Ops in one django-q2 task. Small enough that a batch of LLM-calling steps (per-turn extraction
# with powerful memory off) fits the task timeout; large enough for a busy window of chat turns.
OUTBOX_BATCH_MAX = 20
OUTBOX_DONE_MARK_SECONDS = 1.0


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
    outbox_op_enqueue_on_commit(op_id=op.op_id)
    return op


@dataclass
class OutboxOpStatement:
    """An op's INSERT, to run as a data-modifying CTE of a caller's single-statement write."""

    op_id: UUID
    sql: str
    params: list[Any]


def outbox_op_statement(
    *, character_id: int, op_type: str, payload: dict[str, Any], source: str | None = None
) -> OutboxOpStatement:
    """The INSERT that registers one op (only when ``source``, if given, yields a row).

    The caller runs it in the transaction (or the statement) of the change the op belongs to, and
    then calls ``outbox_op_enqueue_on_commit`` with ``op_id``.
    """
    op_id = uuid4()
    sql, params = insert_select_sql(
        OutboxOp,
        [{"op_id": op_id, "character_id": character_id, "type": op_type, "payload": payload}],
        source=source,
    )
    return OutboxOpStatement(op_id=op_id, sql=sql, params=params)


def outbox_op_enqueue_on_commit(*, op_id: UUID) -> None:
    """Hand the op to the process's dispatcher once the transaction that registered it commits (at
    once in autocommit); the dispatcher enqueues the ops committed within a short window together."""
    from nekomem.journal.dispatch import outbox_dispatcher

    transaction.on_commit(lambda: outbox_dispatcher().add(op_id))


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
    outbox_ops_enqueue(op_ids=[op_id])


def outbox_ops_enqueue(*, op_ids: Sequence[UUID]) -> None:
    """Enqueue django-q2 tasks that run these ops, up to ``OUTBOX_BATCH_MAX`` ops a task."""
    from django_q.tasks import async_task

    for start in range(0, len(op_ids), OUTBOX_BATCH_MAX):
        chunk = [str(op_id) for op_id in op_ids[start : start + OUTBOX_BATCH_MAX]]
        try:
            async_task(
                OUTBOX_TASK,
                chunk,
                task_name=f"outbox-{chunk[0]}" + (f"+{len(chunk) - 1}" if len(chunk) > 1 else ""),
                group="outbox",
                broker=_outbox_broker(),
                # The op row records completion (status, done_at), so a successful run is not also
                # saved as a django-q result: with save_limit that save reads back every kept result
                # under a row lock to prune one. Failures are still saved.
                save=False,
            )
        except Exception:
            # The ops are durable; the periodic sweep enqueues them again, so a broker hiccup loses
            # nothing.
            logger.exception("could not enqueue outbox ops %s; the sweep will retry them", chunk)


@dataclass
class ClaimedOp:
    op_id: UUID
    character_id: int
    type: str
    payload: dict[str, Any]


def _claim(op_ids: Sequence[UUID]) -> dict[UUID, ClaimedOp]:
    """Lease the pending ops among ``op_ids`` and read them, in one ``UPDATE … RETURNING``."""
    now = timezone.now()
    db = database()

    def quoted(field: str) -> str:
        return db.ops.quote_name(column(OutboxOp, field))

    id_field = model_field(OutboxOp, "op_id")
    lease = model_field(OutboxOp, "lease_until")
    sql = (
        f"UPDATE {db.ops.quote_name(OutboxOp._meta.db_table)} SET {quoted('lease_until')} = %s "
        f"WHERE {quoted('op_id')} IN ({', '.join(['%s'] * len(op_ids))}) AND {quoted('status')} = %s "
        f"AND ({quoted('lease_until')} IS NULL OR {quoted('lease_until')} < %s) "
        f"RETURNING {quoted('op_id')}, {quoted('character')}, {quoted('type')}, {quoted('payload')}"
    )
    params = [
        lease.get_db_prep_save(now + OUTBOX_LEASE, db),
        *(id_field.get_db_prep_save(op_id, db) for op_id in op_ids),
        OutboxOp.Status.PENDING,
        lease.get_db_prep_save(now, db),
    ]
    with db.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    claimed = {}
    for raw_id, character_id, op_type, payload in rows:
        op_id = id_field.to_python(raw_id)
        claimed[op_id] = ClaimedOp(
            op_id=op_id,
            character_id=character_id,
            type=op_type,
            payload=json.loads(payload) if isinstance(payload, str | bytes) else payload,
        )
    return claimed


def outbox_op_execute(*, op_id: UUID) -> str:
    """Run one op's steps once. Returns the op's status afterwards (or "busy" / "missing")."""
    return outbox_ops_execute(op_ids=[op_id])[op_id]


def outbox_ops_execute(*, op_ids: Sequence[UUID]) -> dict[UUID, str]:
    """Run each op's steps once, in the given order; returns each op's status afterwards.

    An op another worker holds is "busy", one that is gone "missing"; done and dead ops are left
    alone. Each op succeeds, waits or fails on its own; finished ops are marked done together, at
    least every ``OUTBOX_DONE_MARK_SECONDS``.
    """
    if not op_ids:
        return {}
    claimed = _claim(op_ids)
    statuses: dict[UUID, str] = {}
    unclaimed = [op_id for op_id in op_ids if op_id not in claimed]
    if unclaimed:
        known = dict(OutboxOp.objects.filter(op_id__in=unclaimed).values_list("op_id", "status"))
        for op_id in unclaimed:
            status = known.get(op_id)
            statuses[op_id] = (
                "missing" if status is None else "busy" if status == OutboxOp.Status.PENDING else status
            )
    done: list[UUID] = []
    last_mark = time.monotonic()

    def mark_done() -> None:
        nonlocal last_mark
        if done:
            OutboxOp.objects.filter(op_id__in=done).update(
                status=OutboxOp.Status.DONE, done_at=timezone.now(), lease_until=None, last_error=""
            )
            done.clear()
        last_mark = time.monotonic()

    for op_id in op_ids:
        op = claimed.get(op_id)
        if op is None or op_id in statuses:
            continue
        try:
            for _name, step in outbox_steps_for(op.type):
                step(op.character_id, op.payload)
        except OutboxWait as wait:
            OutboxOp.objects.filter(op_id=op_id).update(
                last_error=f"waiting: {wait.reason}", lease_until=None
            )
            statuses[op_id] = "waiting"
        except Exception as exc:  # every failure counts as one attempt; the op itself stays durable
            statuses[op_id] = _outbox_op_fail(op_id=op_id, error=exc)
        else:
            done.append(op_id)
            statuses[op_id] = OutboxOp.Status.DONE
        # Finished ops are marked together, but never held back long: a step may call an LLM, and
        # a task cut short by its timeout must not take finished ops back to pending.
        if time.monotonic() - last_mark >= OUTBOX_DONE_MARK_SECONDS:
            mark_done()
    mark_done()
    return statuses


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
    op_ids = list(ops.order_by("created_at").values_list("op_id", flat=True))
    outbox_ops_enqueue(op_ids=op_ids)
    return len(op_ids)
