"""Writes to the event log, the applied sentinel and the outbox (their trimming: ``compaction``; what
forgetting blanks in them: ``redaction``)."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID, uuid4

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from nekomem.characters.locks import lock_character
from nekomem.journal.broker import outbox_ops_enqueue
from nekomem.journal.causes import change_source, current_cause
from nekomem.journal.dispatch import outbox_dispatcher
from nekomem.journal.events import VERSION_EVENT, check_event_type
from nekomem.journal.jobs import JobWait
from nekomem.journal.models import AppliedSentinel, Event, OutboxOp, WorkStatus
from nekomem.journal.registry import (
    event_handler_for,
    outbox_steps_for,
    raw_turns_hooks,
)
from nekomem.journal.work import (
    DEFAULT_LEASE,
    work_claim_returning,
    work_current,
    work_fail,
    work_succeed,
    work_wait,
)
from nekomem.runtime.state import STORAGE_BLOCKED, StorageBlocked, storage_writer
from nekomem.statements import insert_select_sql

logger = logging.getLogger(__name__)

# Finished ops are marked done together, at least this often.
OUTBOX_DONE_MARK_SECONDS = 1.0


def _require_atomic(what: str) -> None:
    if not connection.in_atomic_block:
        raise RuntimeError(f"{what} must run inside the transaction of the change it belongs to")


def event_append(*, character_id: int, event_type: str, payload: dict[str, Any]) -> Event:
    """Append one event and mark it applied: the caller changes the view in the same transaction."""
    _require_atomic("event_append")
    check_event_type(event_type)
    cause, source = current_cause()
    event = Event.objects.create(
        character_id=character_id,
        type=event_type,
        ts=timezone.now(),
        payload=payload,
        cause=cause,
        source=source,
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
    # Versions record states the views hold already: they are never replayed.
    pending = Event.objects.exclude(type=VERSION_EVENT)
    if character_id is not None:
        pending = pending.filter(character_id=character_id)
    for cid in pending.values_list("character_id", flat=True).distinct().order_by("character_id"):
        sentinel = AppliedSentinel.objects.filter(character_id=cid).first()
        after = sentinel.last_applied_seq if sentinel and sentinel.last_applied_seq is not None else 0
        replay = Event.objects.filter(character_id=cid, seq__gt=after).exclude(type=VERSION_EVENT)
        for event in replay.order_by("seq").iterator():
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


def raw_turns_written_on_commit(*, character_id: int) -> None:
    """Tell the raw-turns hooks (``register_raw_turns_hook``) once the transaction that wrote a chat
    turn's raw-log rows commits (at once in autocommit). A hook that fails is logged, never raised:
    the turn is written and answered by then."""

    def notify() -> None:
        for hook in raw_turns_hooks():
            try:
                hook(character_id)
            except Exception:
                logger.exception("raw-turns hook failed character=%s", character_id)

    transaction.on_commit(notify)


def outbox_op_enqueue_on_commit(*, op_id: UUID) -> None:
    """Hand the op to the process's dispatcher once the transaction that registered it commits (at
    once in autocommit); the dispatcher enqueues the ops committed within a short window together."""
    transaction.on_commit(lambda: outbox_dispatcher().add(op_id))


@dataclass
class ClaimedOp:
    op_id: UUID
    character_id: int
    type: str
    payload: dict[str, Any]
    steps_done: list[str]


def _claim(op_ids: Sequence[UUID]) -> tuple[UUID | None, dict[UUID, ClaimedOp]]:
    """Lease the claimable ops among ``op_ids`` under one run token, and read them, in one statement."""
    token, rows = work_claim_returning(
        OutboxOp,
        pks=op_ids,
        lease=DEFAULT_LEASE,
        fields=("op_id", "character", "type", "payload", "steps_done"),
    )
    return token, {
        op_id: ClaimedOp(
            op_id=op_id, character_id=character_id, type=op_type, payload=payload, steps_done=list(done or [])
        )
        for op_id, character_id, op_type, payload, done in rows
    }


def outbox_op_execute(*, op_id: UUID) -> str:
    """Run one op's steps once. Returns the op's status afterwards (or "busy" / "missing")."""
    return outbox_ops_execute(op_ids=[op_id])[op_id]


def outbox_ops_execute(*, op_ids: Sequence[UUID]) -> dict[UUID, str]:
    """Run each op's steps once, in the given order; returns each op's status afterwards.

    An op another worker holds is "busy", one that is gone "missing"; done and dead ops are left
    alone. Each op succeeds, waits or fails on its own (``nekomem.journal.jobs`` counts the attempts,
    backs off and dead-letters); finished ops are marked done together, at least every
    ``OUTBOX_DONE_MARK_SECONDS``. While storage is blocked no op is claimed (each is
    ``storage_blocked``); ops the block catches in flight wait with that reason until ``continue``.
    """
    if not op_ids:
        return {}
    with storage_writer() as allowed:
        if not allowed:
            return dict.fromkeys(op_ids, STORAGE_BLOCKED)
        return _ops_execute(op_ids)


def _ops_execute(op_ids: Sequence[UUID]) -> dict[UUID, str]:
    token, claimed = _claim(op_ids)
    statuses: dict[UUID, str] = {}
    unclaimed = [op_id for op_id in op_ids if op_id not in claimed]
    if unclaimed:
        known = dict(OutboxOp.objects.filter(op_id__in=unclaimed).values_list("op_id", "status"))
        for op_id in unclaimed:
            status = known.get(op_id)
            statuses[op_id] = "missing" if status is None else status if status in _FINISHED else "busy"
    done: list[UUID] = []
    last_mark = time.monotonic()

    def mark_done() -> None:
        nonlocal last_mark
        if done:
            work_succeed(OutboxOp.objects.filter(op_id__in=done, run_token=token, status=WorkStatus.RUNNING))
            done.clear()
        last_mark = time.monotonic()

    blocked = False
    for op_id in op_ids:
        op = claimed.get(op_id)
        if op is None or op_id in statuses:
            continue
        succeeded: list[str] = []
        try:
            if blocked:  # the rest of the claimed batch waits with the op the block stopped
                raise StorageBlocked()
            for name, step in outbox_steps_for(op.type):
                if name in op.steps_done:
                    continue
                with change_source(f"op:{op_id}"):
                    step(op.character_id, op.payload)
                succeeded.append(name)
        except StorageBlocked:
            _steps_record(op, token=token, succeeded=succeeded)
            blocked = True
            work_wait(work_current(OutboxOp, pk=op_id, token=token), reason=STORAGE_BLOCKED)
            statuses[op_id] = WorkStatus.WAITING
        except JobWait as wait:
            _steps_record(op, token=token, succeeded=succeeded)
            work_wait(
                work_current(OutboxOp, pk=op_id, token=token),
                reason=wait.reason,
                retry_after=wait.retry_after,
            )
            statuses[op_id] = WorkStatus.WAITING
        except Exception as exc:  # every failure counts as one attempt; the op itself stays durable
            _steps_record(op, token=token, succeeded=succeeded)
            status = work_fail(OutboxOp, pk=op_id, token=token, error=exc) or "busy"
            logger.warning(
                "outbox op %s failed (%s)%s",
                op_id,
                type(exc).__name__,
                "; dead-lettered" if status == WorkStatus.DEAD else "",
            )
            statuses[op_id] = status
        else:
            done.append(op_id)
            statuses[op_id] = WorkStatus.DONE
        # Finished ops are marked together, but never held back long: a step may call an LLM, and
        # a task cut short by its timeout must not take finished ops back to pending.
        if time.monotonic() - last_mark >= OUTBOX_DONE_MARK_SECONDS:
            mark_done()
    mark_done()
    return statuses


_FINISHED = (WorkStatus.DONE, WorkStatus.DEAD)


def _steps_record(op: ClaimedOp, *, token: UUID | None, succeeded: list[str]) -> None:
    """Keep the steps this run finished with an op that did not finish, so its retry skips them.

    Written only when the op stops short (one statement, off the path of an op that succeeds): a
    worker that dies between steps leaves the run's steps unrecorded, and the lease's expiry runs
    them again, which is the at-least-once delivery every step is written for."""
    if succeeded:
        work_current(OutboxOp, pk=op.op_id, token=token).update(steps_done=[*op.steps_done, *succeeded])


def outbox_op_retry(*, op_id: UUID) -> bool:
    """Give a dead op a fresh set of attempts and enqueue it."""
    retried = OutboxOp.objects.filter(op_id=op_id, status=WorkStatus.DEAD).update(
        status=WorkStatus.PENDING, attempts=0, finished_at=None, lease_until=None, next_attempt_at=None
    )
    if retried:
        outbox_ops_enqueue(op_ids=[op_id])
    return retried == 1
