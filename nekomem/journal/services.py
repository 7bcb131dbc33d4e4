"""Writes to the event log, the applied sentinel and the outbox."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID, uuid4

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Max, Min, OuterRef, Q, QuerySet, Subquery, TextField, Window
from django.db.models.functions import Cast, RowNumber
from django.utils import timezone
from django_q.models import Task

from nekomem.characters.locks import lock_character
from nekomem.journal.broker import outbox_ops_enqueue
from nekomem.journal.causes import change_source, current_cause
from nekomem.journal.dispatch import outbox_dispatcher
from nekomem.journal.events import VERSION_EVENT, check_event_type
from nekomem.journal.jobs import JobWait
from nekomem.journal.models import AppliedSentinel, Event, Job, OutboxOp, WorkStatus
from nekomem.journal.registry import (
    event_handler_for,
    event_row_keys,
    event_seeders,
    live_row_keys,
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


# --- compaction (reference §2.13–2.14) ----------------------------------------------------------------

# Compaction looks again at a log once this many events were appended since the last seeds, or once an
# event is older than the history's retention (the original's 90 days by default); it drops only the
# events past the retention that are not among the last versions of a live row.
EVENTS_COMPACT_LINES = 10_000
EVENTS_COMPACT_AGE = timedelta(days=90)
# A live row keeps at least this many versions in the journal, however old (issue 49).
HISTORY_KEEP_VERSIONS = 5
# Versions kept past the retention are looked at again this often (a row's newer versions, a shorter
# retention, or its deletion may free them).
HISTORY_RESCAN = timedelta(days=1)
# Done ops are dropped once a character's outbox holds this many ops (the file's ≥1000 lines), or
# once the oldest done op is this old; pending, running, waiting and dead ones stay.
OUTBOX_COMPACT_LINES = 1_000
OUTBOX_COMPACT_AGE = EVENTS_COMPACT_AGE


@dataclass(frozen=True)
class CompactReport:
    events_dropped: int = 0
    seeds: int = 0
    ops_dropped: int = 0


def journal_compact(*, character_id: int, now: datetime | None = None) -> CompactReport:
    """Compact one character's event log and outbox when they are due (the journal schedule's tick)."""
    now = now or timezone.now()
    dropped, seeds = events_compact(character_id=character_id, now=now)
    return CompactReport(
        events_dropped=dropped, seeds=seeds, ops_dropped=outbox_compact(character_id=character_id, now=now)
    )


def history_retention() -> timedelta:
    """How long every version of a row stays in the journal (``NEKOMEM_HISTORY_RETENTION_DAYS``)."""
    return timedelta(days=settings.HISTORY_RETENTION_DAYS)


def _compaction_due(*, character_id: int, now: datetime, cutoff: datetime, retention: timedelta) -> bool:
    """An event past the retention that the last compaction did not see past it yet, or
    ``EVENTS_COMPACT_LINES`` events since the last seeds (rows that gained versions since may free
    older ones). Events the last compaction kept as a live row's last versions do not make it due, but
    once ``HISTORY_RESCAN`` after it any event past the retention does (the retention may have been
    shortened since)."""
    events = Event.objects.filter(character_id=character_id).exclude(type=VERSION_EVENT)
    last_seed = events.filter(seed=True).aggregate(seq=Max("seq"), ts=Max("ts"))
    logged = events.filter(seed=False)
    if last_seed["seq"] is not None:
        since = logged.filter(seq__gt=last_seed["seq"])
        if since.count() >= EVENTS_COMPACT_LINES:
            return True
        if last_seed["ts"] > now - HISTORY_RESCAN:
            logged = logged.filter(ts__gt=last_seed["ts"] - retention)
    return logged.filter(ts__lte=cutoff).exists()


def _protected_versions(*, character_id: int) -> set[int]:
    """The last ``HISTORY_KEEP_VERSIONS`` events of every live row of the character."""
    live = live_row_keys(character_id)
    kept: dict[str, int] = {}
    protected: set[int] = set()
    versions = (
        Event.objects.filter(character_id=character_id, seed=False)
        .exclude(type=VERSION_EVENT)
        .order_by("-seq")
    )
    for pk, event_type, payload in versions.values_list("pk", "type", "payload").iterator(chunk_size=2000):
        for row in event_row_keys(event_type, payload):
            if row in live and kept.get(row, 0) < HISTORY_KEEP_VERSIONS:
                kept[row] = kept.get(row, 0) + 1
                protected.add(pk)
    return protected


def versions_prune(*, character_id: int, cutoff: datetime) -> int:
    """Drop the character's row versions older than ``cutoff``, except each row's last
    ``HISTORY_KEEP_VERSIONS`` (a deleted row's too: its last versions are what an undo reads)."""
    versions = Event.objects.filter(character_id=character_id, type=VERSION_EVENT)
    if not versions.filter(ts__lte=cutoff).exists():
        return 0
    ranked = versions.annotate(
        newer=Window(RowNumber(), partition_by=[F("layer"), F("row")], order_by=F("seq").desc())
    ).values_list("pk", "newer", "ts")
    doomed = [pk for pk, newer, ts in ranked if newer > HISTORY_KEEP_VERSIONS and ts <= cutoff]
    dropped = 0
    for start in range(0, len(doomed), RETENTION_BATCH):
        dropped += Event.objects.filter(pk__in=doomed[start : start + RETENTION_BATCH]).delete()[0]
    return dropped


def events_compact(*, character_id: int, now: datetime | None = None, force: bool = False) -> tuple[int, int]:
    """Drop the character's events older than the history's retention (``history_retention``), except
    the last ``HISTORY_KEEP_VERSIONS`` of each live row, and write seeds derived from its current views
    in place of what was dropped (reference §2.14, bounded by the retention: a version younger than it
    is never dropped, whatever the log's length). The previous seeds go: the new ones stand for the
    same views. Returns (events dropped, seeds written); ``force``: now, seeds even if nothing is old.

    Only a log whose every event is applied is compacted: an event still waiting for replay (a paused
    reconcile) is not in the views yet, so the seeds could not stand for it. The sentinel moves to the
    last seed, which the views hold already."""
    now = now or timezone.now()
    retention = history_retention()
    cutoff = now - retention
    versions_prune(character_id=character_id, cutoff=cutoff)
    # Versions are the history, pruned above by its retention: the log compaction neither counts nor
    # drops them.
    journal = Event.objects.filter(character_id=character_id).exclude(type=VERSION_EVENT)
    if not journal.filter(seed=False).exists():
        return 0, 0
    if not (force or _compaction_due(character_id=character_id, now=now, cutoff=cutoff, retention=retention)):
        return 0, 0
    with transaction.atomic():
        lock_character(character_id)
        last = journal.aggregate(last=Max("seq"))["last"]
        sentinel = AppliedSentinel.objects.filter(character_id=character_id).first()
        if last is None or sentinel is None or (sentinel.last_applied_seq or 0) < last:
            return 0, 0
        protected = _protected_versions(character_id=character_id)
        old = journal.filter(seed=False, ts__lte=cutoff, seq__lte=last)
        doomed = [pk for pk in old.values_list("pk", flat=True) if pk not in protected]
        if not (doomed or force):
            return 0, 0
        seeds = [
            Event(
                character_id=character_id,
                type=check_event_type(event_type),
                ts=now,
                payload=payload,
                seed=True,
                cause="compaction",
            )
            for seeder in event_seeders()
            for event_type, payload in seeder(character_id)
        ]
        dropped = 0
        for start in range(0, len(doomed), RETENTION_BATCH):
            dropped += Event.objects.filter(pk__in=doomed[start : start + RETENTION_BATCH]).delete()[0]
        dropped += journal.filter(seed=True, seq__lte=last).delete()[0]
        Event.objects.bulk_create(seeds, batch_size=1000)
        newest = journal.order_by("-seq").first()
        if newest is not None:
            _sentinel_advance(character_id=character_id, event=newest)
        else:  # nothing to seed: as the original, the sentinel points at no event
            AppliedSentinel.objects.filter(pk=sentinel.pk).update(
                last_applied_seq=None, last_applied_event_id=None, ts=now
            )
    logger.info(
        "events compacted character=%s dropped=%d kept=%d seeds=%d",
        character_id,
        dropped,
        len(protected),
        len(seeds),
    )
    return dropped, len(seeds)


def outbox_compact(*, character_id: int, now: datetime | None = None) -> int:
    """Drop the character's done ops once its outbox holds ``OUTBOX_COMPACT_LINES`` ops or its oldest
    done op is ``OUTBOX_COMPACT_AGE`` old; returns how many were dropped. A done op is only a record:
    its effects are in the views, and a replay of it would change nothing."""
    now = now or timezone.now()
    ops = OutboxOp.objects.filter(character_id=character_id)
    done = ops.filter(status=WorkStatus.DONE)
    oldest = done.aggregate(oldest=Min("finished_at"))["oldest"]
    if oldest is None:
        return 0
    if ops.count() < OUTBOX_COMPACT_LINES and oldest > now - OUTBOX_COMPACT_AGE:
        return 0
    dropped, _ = done.delete()
    logger.info("outbox compacted character=%s dropped=%d", character_id, dropped)
    return dropped


# --- retention (issue 35: nothing that only grows) ------------------------------------------------------

# A done job is a record for the jobs page: kept a month, and the newest of each (character, kind) for
# good, so "when did this loop last finish" stays answerable. Dead work stays until it is retried.
JOB_DONE_RETENTION = timedelta(days=30)
# django-q2's result rows: ``save_limit`` caps the successful ones by count; these cap them by age, and
# the failed ones (which no limit caps) too.
TASK_SUCCESS_RETENTION = timedelta(days=7)
TASK_FAILURE_RETENTION = timedelta(days=30)
RETENTION_BATCH = 5_000  # rows a delete statement: no long lock on a large table


@dataclass(frozen=True)
class RetentionReport:
    jobs: int = 0
    task_successes: int = 0
    task_failures: int = 0


def _delete_in_batches(queryset: QuerySet[Any]) -> int:
    deleted = 0
    while True:
        pks = list(queryset.values_list("pk", flat=True)[:RETENTION_BATCH])
        if not pks:
            return deleted
        count, _ = queryset.model._default_manager.filter(pk__in=pks).delete()
        deleted += count


def work_retention(*, now: datetime | None = None) -> RetentionReport:
    """Drop done jobs past ``JOB_DONE_RETENTION`` (each (character, kind)'s newest stays) and
    django-q2 task results past their retention; the daily retention schedule's tick."""
    now = now or timezone.now()
    newest = (
        Job.objects.filter(character_id=OuterRef("character_id"), kind=OuterRef("kind"))
        .order_by("-created_at", "-pk")
        .values("pk")[:1]
    )
    old_jobs = Job.objects.filter(status=WorkStatus.DONE, finished_at__lt=now - JOB_DONE_RETENTION).exclude(
        pk=Subquery(newest)
    )
    report = RetentionReport(
        jobs=_delete_in_batches(old_jobs),
        task_successes=_delete_in_batches(
            Task.objects.filter(success=True, stopped__lt=now - TASK_SUCCESS_RETENTION)
        ),
        task_failures=_delete_in_batches(
            Task.objects.filter(success=False, stopped__lt=now - TASK_FAILURE_RETENTION)
        ),
    )
    if report.jobs or report.task_successes or report.task_failures:
        logger.info(
            "retention jobs=%d task_successes=%d task_failures=%d",
            report.jobs,
            report.task_successes,
            report.task_failures,
        )
    return report


# A forgotten text this long is blanked wherever it is quoted (a merge's survivor, a queued correction,
# a seed); a shorter one only where a string is exactly it, or inside the forgotten row's own events:
# a word of two characters is inside many texts that were never about it.
REDACT_QUOTED_MIN = 8
# More texts than this are looked for in every event of the character (one scan) rather than by a
# filter per text.
REDACT_FILTER_MAX = 200


def _stored_forms(text: str) -> set[str]:
    """How a string shows inside a JSON payload as the database stores it: escaped to ASCII (Django's
    encoder, on SQLite) or as UTF-8 (PostgreSQL's ``jsonb`` text)."""
    return {json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}


def events_redact(*, character_id: int, texts: Collection[str], match: Q | None = None) -> int:
    """Blank every copy of ``texts`` (a forgotten row's) in the character's events, seeds included: in the
    events that ``match`` (the row's own versions) every string that holds one; in every other event
    every string that holds one of at least ``REDACT_QUOTED_MIN`` characters or equals a shorter one.
    The events stay, so replay and the applied sentinel are unchanged and the history shows that the
    row was there, never what it said. Runs in the forgetting transaction; returns how many events
    were rewritten."""
    wanted = sorted({text for text in texts if text})
    if not wanted:
        return 0
    own = match if match is not None else Q(pk__in=[])
    events = Event.objects.filter(character_id=character_id)
    if len(wanted) <= REDACT_FILTER_MAX:
        quoting = Q()
        for text in wanted:
            for form in _stored_forms(text):
                quoting |= Q(payload_text__contains=form)
        events = events.annotate(payload_text=Cast("payload", TextField())).filter(own | quoting)
    mine = set(Event.objects.filter(own, character_id=character_id).values_list("pk", flat=True))
    long_texts = [text for text in wanted if len(text) >= REDACT_QUOTED_MIN]
    short_texts = {text for text in wanted if len(text) < REDACT_QUOTED_MIN}
    rewritten = 0
    for pk, payload in events.values_list("pk", "payload"):
        if pk in mine:
            blanked = _blanked(payload, wanted)
        else:
            blanked = _blanked(payload, long_texts, exact=short_texts)
        if blanked != payload:
            Event.objects.filter(pk=pk).update(payload=blanked)
            rewritten += 1
    return rewritten


def _blanked(value: Any, texts: list[str], *, exact: Collection[str] = ()) -> Any:
    if isinstance(value, str):
        return "" if value in exact or any(text in value for text in texts) else value
    if isinstance(value, list):
        return [_blanked(item, texts, exact=exact) for item in value]
    if isinstance(value, dict):
        return {key: _blanked(item, texts, exact=exact) for key, item in value.items()}
    return value


def outbox_ops_redact(*, character_id: int, texts: Collection[str]) -> int:
    """Blank ``texts`` in the character's outbox ops (a turn's op carries its messages): a forgotten turn
    is neither kept there nor extracted later. Returns how many ops were rewritten."""
    wanted = [text for text in texts if text]
    if not wanted:
        return 0
    rewritten = 0
    for pk, payload in OutboxOp.objects.filter(character_id=character_id).values_list("pk", "payload"):
        blanked = _blanked(payload, wanted)
        if blanked != payload:
            OutboxOp.objects.filter(pk=pk).update(payload=blanked)
            rewritten += 1
    return rewritten
