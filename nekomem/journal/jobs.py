"""The kernel's one mechanism for durable background work: claim, retry, park, dead-letter, self-heal.

A job row is the durable record. It is created inside the transaction of its cause and enqueued on
commit; a runner claims it (a fresh ``run_token`` and a lease), and every finishing write is
conditional on that token, so a cancelled or re-claimed job is never overwritten by a stale run.
Failures count attempts with exponential back-off (the job waits with reason ``backoff``); the
fifth dead-letters it. Work that cannot run for a reason outside itself (no LLM provider) waits
without spending an attempt, with a machine-readable reason (``no_provider:summary``). One sweep
re-enqueues what is due and dead-letters what is spent.

While storage is blocked nothing here writes: a run does not claim its work, the sweep does
nothing, and work the block caught in flight waits with reason ``storage_blocked`` until
``continue`` enqueues it (``nekomem.runtime.state``).

The outbox keeps its own table (the turn write inserts into it in one statement), but it is claimed,
retried and dead-lettered by the same functions here, which work on any ``DurableWork`` model.

Layers register their job kinds from ``AppConfig.ready()``; the kernel imports no layer.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Field, JSONField, Q, QuerySet
from django.utils import timezone
from django.utils.module_loading import import_string

from nekomem.characters.locks import lock_character
from nekomem.journal.broker import outbox_ops_enqueue, task_enqueue
from nekomem.journal.causes import change_source
from nekomem.journal.models import DurableWork, Job, OutboxOp, WorkStatus
from nekomem.llm import LLMUnavailable, provider_status
from nekomem.runtime.state import STORAGE_BLOCKED, StorageBlocked, storage_writer
from nekomem.statements import column, database, model_field

logger = logging.getLogger(__name__)

JOB_MAX_ATTEMPTS = 5
# The first retry waits a minute (the sweep's own period); each further one twice as long.
BACKOFF_FIRST = timedelta(minutes=1)
DEFAULT_LEASE = timedelta(minutes=10)
# Reference §3.8 liveness rule: dead work of a kind that opts in gets one probe every 5 h.
SELF_HEAL_EVERY = timedelta(hours=5)
# Done jobs of a loop's kind are kept this long as a record; dead work stays until it is retried.
DONE_KEPT_FOR = timedelta(days=7)
# Work younger than this is most likely still queued from its on_commit hook.
SWEEP_GRACE = timedelta(minutes=1)
JOB_TASK = "nekomem.journal.tasks.job_run"

WAIT_BACKOFF = "backoff"
NO_PROVIDER = "no_provider:"
LEASE_EXPIRED = "LeaseExpired: the worker holding it stopped before it finished"

W = TypeVar("W", bound=DurableWork)


def no_provider_reason(tier: str) -> str:
    return f"{NO_PROVIDER}{tier}"


def backoff_delay(attempts: int) -> timedelta:
    """How long work waits after its ``attempts``-th failure: 1, 2, 4, 8 minutes."""
    return BACKOFF_FIRST * (2 ** max(0, attempts - 1))


def error_text(error: BaseException) -> str:
    # Exceptions of ours carry metadata only (never keys or memory text): see nekomem.llm.errors.
    return f"{type(error).__name__}: {error}"[:2000]


class JobWait(Exception):
    """The work cannot run yet for a reason outside itself; it waits without spending an attempt.

    ``reason`` is machine-readable (``no_provider:summary``). Work waiting for a provider is due once
    one is configured; any other wait is tried again after ``retry_after``.
    """

    def __init__(self, reason: str, *, retry_after: timedelta = SWEEP_GRACE) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after: timedelta | None = None if reason.startswith(NO_PROVIDER) else retry_after


class JobGiveUp(Exception):
    """The run failed in a way a retry would repeat (a truncated reply): dead-letter at once."""

    def __init__(self, *, outcome: str, error: BaseException) -> None:
        super().__init__(outcome)
        self.outcome = outcome
        self.error = error


# --- the registry ----------------------------------------------------------------------------------

JobHandler = Callable[[Job], str | None]


@dataclass(frozen=True)
class JobKind:
    """A kind of job as a layer registered it.

    ``handler`` (a callable or its dotted path) runs one claimed job and returns its outcome; it may
    finish the job itself (inside its own transaction) with ``job_succeed``. ``tier`` is the LLM tier
    whose missing provider makes the job wait. ``on_dead`` runs once when the job dead-letters.
    ``self_heal`` opts dead jobs into the 5-hour probe. A kind ``run_by_schedule`` has no handler:
    its layer's own loop runs it (``job_start``) and the sweep never enqueues it.
    """

    kind: str
    handler: JobHandler | str | None
    tier: str | None = None
    lease: timedelta = DEFAULT_LEASE
    on_dead: Callable[[Job], None] | str | None = None
    self_heal: bool = False
    # The wait after the n-th failure, for work whose spec fixes its own (promotion: 30 minutes);
    # None is the kernel's 1, 2, 4, 8 minutes.
    backoff: Callable[[int], timedelta] | None = None

    @property
    def run_by_schedule(self) -> bool:
        return self.handler is None

    def resolve_handler(self) -> JobHandler:
        if self.handler is None:
            raise TypeError(f"job kind {self.kind} is run by its layer's schedule, not by a handler")
        return import_string(self.handler) if isinstance(self.handler, str) else self.handler

    def resolve_on_dead(self) -> Callable[[Job], None] | None:
        return import_string(self.on_dead) if isinstance(self.on_dead, str) else self.on_dead


_kinds: dict[str, JobKind] = {}


def register_job_kind(
    kind: str,
    *,
    handler: JobHandler | str | None,
    tier: str | None = None,
    lease: timedelta = DEFAULT_LEASE,
    on_dead: Callable[[Job], None] | str | None = None,
    self_heal: bool = False,
    backoff: Callable[[int], timedelta] | None = None,
) -> JobKind:
    spec = JobKind(
        kind=kind,
        handler=handler,
        tier=tier,
        lease=lease,
        on_dead=on_dead,
        self_heal=self_heal,
        backoff=backoff,
    )
    _kinds[kind] = spec
    return spec


def unregister_job_kind(kind: str) -> None:
    _kinds.pop(kind, None)


def job_kind(kind: str) -> JobKind | None:
    return _kinds.get(kind)


def registered_job_kinds() -> list[JobKind]:
    return sorted(_kinds.values(), key=lambda spec: spec.kind)


# --- the mechanism, on any DurableWork table ----------------------------------------------------------


def claimable(now: datetime) -> Q:
    """Work a runner may take: not finished, and not held by a live lease."""
    return Q(status__in=[WorkStatus.PENDING, WorkStatus.WAITING]) | Q(
        status=WorkStatus.RUNNING, lease_until__lt=now
    )


def work_claim(queryset: QuerySet[W], *, lease: timedelta, now: datetime | None = None) -> uuid.UUID | None:
    """Lease the claimable rows of ``queryset`` under one fresh run token; None when none was free.

    An explicit run does not wait for the back-off: the sweep decides when work is due.
    """
    now = now or timezone.now()
    token = uuid.uuid4()
    claimed = queryset.filter(claimable(now)).update(
        status=WorkStatus.RUNNING, lease_until=now + lease, run_token=token, updated_at=now
    )
    return token if claimed else None


def work_claim_returning(
    model: type[W], *, pks: Sequence[Any], lease: timedelta, fields: Sequence[str]
) -> tuple[uuid.UUID | None, list[tuple[Any, ...]]]:
    """``work_claim`` of the rows ``pks`` in one ``UPDATE … RETURNING`` that also reads ``fields``.

    The outbox claims a batch of ops for every few chat turns; as ``UPDATE`` then ``SELECT`` through
    the ORM the cluster ran half as many ops a second on SQLite (``bench/outbox_claim.py``). Built
    from the model's fields, as ``nekomem.statements`` builds the turn write.
    """
    db = database()
    now = timezone.now()
    token = uuid.uuid4()

    def quoted(name: str) -> str:
        return db.ops.quote_name(column(model, name))

    def prep(name: str, value: Any) -> Any:
        return model_field(model, name).get_db_prep_save(value, db)

    sql = (
        f"UPDATE {db.ops.quote_name(model._meta.db_table)} SET {quoted('status')} = %s, "
        f"{quoted('lease_until')} = %s, {quoted('run_token')} = %s, {quoted('updated_at')} = %s "
        f"WHERE {quoted(model._meta.pk.name)} IN ({', '.join(['%s'] * len(pks))}) "
        f"AND ({quoted('status')} IN (%s, %s) OR ({quoted('status')} = %s AND {quoted('lease_until')} < %s)) "
        f"RETURNING {', '.join(quoted(name) for name in fields)}"
    )
    params = [
        WorkStatus.RUNNING,
        prep("lease_until", now + lease),
        prep("run_token", token),
        prep("updated_at", now),
        *(prep(model._meta.pk.name, pk) for pk in pks),
        WorkStatus.PENDING,
        WorkStatus.WAITING,
        WorkStatus.RUNNING,
        prep("lease_until", now),
    ]
    with db.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    converters = [model_field(model, name) for name in fields]
    values = [tuple(_from_db(f, v) for f, v in zip(converters, row, strict=True)) for row in rows]
    return (token if values else None), values


def _from_db(field: Field, value: Any) -> Any:
    if isinstance(field, JSONField):  # a raw cursor may hand JSON back as text
        return json.loads(value) if isinstance(value, str | bytes) else value
    return field.to_python(value)


def work_current(model: type[W], *, pk: Any, token: uuid.UUID | None) -> QuerySet[W]:
    """The row while this run still holds it: finishing writes go through this."""
    return model._default_manager.filter(pk=pk, run_token=token, status=WorkStatus.RUNNING)


def work_succeed(queryset: QuerySet[W], **also: Any) -> int:
    now = timezone.now()
    return queryset.update(
        status=WorkStatus.DONE,
        waiting_reason="",
        next_attempt_at=None,
        last_error="",
        lease_until=None,
        finished_at=now,
        updated_at=now,
        **also,
    )


def work_wait(queryset: QuerySet[W], *, reason: str, retry_after: timedelta | None = None) -> int:
    """Park without spending an attempt. No ``retry_after``: due once the reason clears (a provider)."""
    now = timezone.now()
    return queryset.update(
        status=WorkStatus.WAITING,
        waiting_reason=reason[:60],
        next_attempt_at=None if retry_after is None else now + retry_after,
        lease_until=None,
        updated_at=now,
    )


def work_fail(
    model: type[W],
    *,
    pk: Any,
    token: uuid.UUID | None,
    error: BaseException,
    now: datetime | None = None,
    delay: Callable[[int], timedelta] = backoff_delay,
) -> str | None:
    """Count one failed attempt: back off (from ``now``, by ``delay``), or dead-letter the fifth.
    Returns the new status, or None when the run no longer held the row (cancelled or re-claimed)."""
    statuses = _fail_rows(
        work_current(model, pk=pk, token=token), error=error_text(error), now=now, delay=delay
    )
    return statuses.get(pk)


def _fail_rows(
    queryset: QuerySet[W],
    *,
    error: str,
    now: datetime | None = None,
    delay: Callable[[int], timedelta] = backoff_delay,
) -> dict[Any, str]:
    """Count one failed attempt on each row of ``queryset``; each write is conditional on the row
    still matching it with the attempts read, so a concurrent finish or retry is never overwritten."""
    now = now or timezone.now()
    statuses: dict[Any, str] = {}
    for pk, attempts in list(queryset.values_list("pk", "attempts")):
        spent = attempts + 1 >= JOB_MAX_ATTEMPTS
        fields: dict[str, Any] = {
            "attempts": attempts + 1,
            "last_error": error,
            "lease_until": None,
            "updated_at": now,
            "status": WorkStatus.DEAD if spent else WorkStatus.WAITING,
            "waiting_reason": "" if spent else WAIT_BACKOFF,
            "next_attempt_at": None if spent else now + delay(attempts + 1),
        }
        if spent:
            fields["finished_at"] = now
        if queryset.filter(pk=pk, attempts=attempts).update(**fields):
            statuses[pk] = fields["status"]
    return statuses


def work_due(model: type[W], *, now: datetime, grace: timedelta, ready_tiers: set[str]) -> QuerySet[W]:
    """Work the sweep should enqueue: pending work whose task was lost, a retry whose back-off ended,
    work that waited for a provider which is now configured, and work the storage block stopped
    (the sweep runs only while storage is open). (Expired leases are failed first.)"""
    due = (
        Q(status=WorkStatus.PENDING, updated_at__lte=now - grace)
        | Q(status=WorkStatus.WAITING, next_attempt_at__lte=now)
        | Q(status=WorkStatus.WAITING, waiting_reason=STORAGE_BLOCKED)
        | Q(
            status=WorkStatus.WAITING, waiting_reason__in=[no_provider_reason(t) for t in sorted(ready_tiers)]
        )
    )
    return model._default_manager.filter(due)


def work_expire_leases(model: type[W], *, now: datetime) -> tuple[list[Any], list[Any]]:
    """Count an attempt for each run whose worker vanished (its lease expired) and make the row due
    at once, or dead when that was its fifth; returns the rows due again and the rows now dead."""
    expired = model._default_manager.filter(status=WorkStatus.RUNNING, lease_until__lt=now)
    statuses = _fail_rows(expired, error=LEASE_EXPIRED, now=now)
    again = [pk for pk, status in statuses.items() if status == WorkStatus.WAITING]
    # The lease itself was the wait: run it again now rather than after a back-off.
    model._default_manager.filter(pk__in=again, status=WorkStatus.WAITING).update(next_attempt_at=now)
    return again, [pk for pk, status in statuses.items() if status == WorkStatus.DEAD]


def work_release_leases(model: type[W]) -> int:
    """At startup no worker of ours is running yet, so every lease is stale: hand the work back."""
    return model._default_manager.filter(status=WorkStatus.RUNNING).update(
        status=WorkStatus.PENDING, lease_until=None, run_token=None
    )


def ready_tiers() -> set[str]:
    """The LLM tiers with a provider configured now."""
    return {tier for tier in settings.LLM_TIER_NAMES if provider_status(tier) is None}


# --- jobs ----------------------------------------------------------------------------------------------


def job_active(*, character_id: int, kind: str, key: str = "") -> Job | None:
    return Job.objects.filter(character_id=character_id, kind=kind, key=key, status__in=Job.ACTIVE).first()


def job_create(
    *,
    character_id: int,
    kind: str,
    key: str = "",
    payload: dict[str, Any] | None = None,
    enqueue: bool = True,
) -> tuple[Job, bool]:
    """The character's active job of ``kind`` (and ``key``), or a new pending one enqueued on commit.

    Returns ``(job, created)``. An active job is left to its own schedule (a retry waits for its
    back-off), so a failing provider is not hammered once per turn.
    """
    if job_kind(kind) is None:
        raise ValueError(f"no job kind {kind!r} is registered")
    with transaction.atomic():
        lock_character(character_id)
        job = job_active(character_id=character_id, kind=kind, key=key)
        if job is not None:
            return job, False
        job = Job.objects.create(character_id=character_id, kind=kind, key=key, payload=payload or {})
        if enqueue:
            job_id = job.pk
            transaction.on_commit(lambda: job_enqueue(job_id=job_id))
    return job, True


def job_enqueue(*, job_id: int) -> None:
    try:
        task_enqueue(JOB_TASK, job_id, task_name=f"job-{job_id}", group="jobs")
    except Exception:
        # The job row is durable; the sweep enqueues it again, so a broker hiccup loses nothing.
        logger.exception("could not enqueue job %s; the sweep will retry it", job_id)


def job_claim(*, job_id: int) -> Job | None:
    """Take a job for one run; None when it is finished, cancelled or leased by another worker."""
    job = Job.objects.filter(pk=job_id).only("kind").first()
    if job is None:
        return None
    spec = job_kind(job.kind)
    token = work_claim(Job.objects.filter(pk=job_id), lease=spec.lease if spec else DEFAULT_LEASE)
    return Job.objects.get(pk=job_id) if token else None


def job_start(
    *, character_id: int, kind: str, key: str = "", now: datetime | None = None, stop_when_dead: bool = False
) -> tuple[Job | None, str]:
    """For a kind its layer's loop runs on its own clock: the active job of (character, kind, key),
    new if there is none, claimed for one run at ``now``.

    Returns ``(job, "")``, or ``(None, why)`` when it must not run now: its back-off is not over, its
    tier still has no provider, another worker holds it, or (``stop_when_dead``, for work keyed on its
    input) the same key already died: it runs again only as the kind's self-heal probe or after a
    retry by hand.
    """
    now = now or timezone.now()
    if stop_when_dead and job_active(character_id=character_id, kind=kind, key=key) is None:
        latest = (
            Job.objects.filter(character_id=character_id, kind=kind, key=key)
            .order_by("-created_at", "-pk")
            .values_list("status", flat=True)
            .first()
        )
        if latest == WorkStatus.DEAD:
            return None, WorkStatus.DEAD
    job, _ = job_create(character_id=character_id, kind=kind, key=key, enqueue=False)
    if job.status == WorkStatus.WAITING:
        tier = job.waiting_reason.removeprefix(NO_PROVIDER)
        if tier != job.waiting_reason and tier not in ready_tiers():
            return None, job.waiting_reason
        if job.next_attempt_at is not None and job.next_attempt_at > now:
            return None, job.waiting_reason
    claimed = job_claim(job_id=job.pk)
    return (claimed, "") if claimed is not None else (None, "busy")


def job_is_current(*, job: Job) -> bool:
    """False once the job was cancelled or re-claimed: the run's result must then be discarded."""
    return work_current(Job, pk=job.pk, token=job.run_token).exists()


def job_succeed(*, job: Job, outcome: str = "") -> bool:
    return work_succeed(work_current(Job, pk=job.pk, token=job.run_token), outcome=outcome[:40]) == 1


def job_wait_for_provider(*, job: Job, tier: str) -> bool:
    """Park the job without spending an attempt until ``tier`` has a provider."""
    return work_wait(work_current(Job, pk=job.pk, token=job.run_token), reason=no_provider_reason(tier)) == 1


def job_wait(*, job: Job, reason: str, retry_after: timedelta | None = None) -> bool:
    return (
        work_wait(work_current(Job, pk=job.pk, token=job.run_token), reason=reason, retry_after=retry_after)
        == 1
    )


def job_fail(*, job: Job, error: BaseException, now: datetime | None = None) -> str | None:
    """Count one failed attempt; the fifth dead-letters the job (and runs its kind's ``on_dead``).

    Returns the job's new status, or None when the run no longer held it. A loop that runs on its
    own clock passes ``now``, which the back-off counts from. A run the storage block stopped is
    not a failure: the job waits for ``continue`` without spending an attempt."""
    if isinstance(error, StorageBlocked):
        return WorkStatus.WAITING if job_wait(job=job, reason=STORAGE_BLOCKED) else None
    spec = job_kind(job.kind)
    delay = spec.backoff if spec is not None and spec.backoff is not None else backoff_delay
    status = work_fail(Job, pk=job.pk, token=job.run_token, error=error, now=now, delay=delay)
    if status is not None:
        logger.warning(
            "job %s %s failed (%s)%s",
            job.kind,
            job.pk,
            type(error).__name__,
            "; dead-lettered" if status == WorkStatus.DEAD else "",
        )
    if status == WorkStatus.DEAD:
        _on_dead(job)
    return status


def job_give_up(*, job: Job, error: BaseException, outcome: str) -> bool:
    """Dead-letter at once: a retry of the same input would fail the same way."""
    now = timezone.now()
    given_up = (
        work_current(Job, pk=job.pk, token=job.run_token).update(
            status=WorkStatus.DEAD,
            attempts=F("attempts") + 1,
            outcome=outcome[:40],
            waiting_reason="",
            next_attempt_at=None,
            last_error=error_text(error),
            lease_until=None,
            finished_at=now,
            updated_at=now,
        )
        == 1
    )
    if given_up:
        _on_dead(job)
    return given_up


def job_cancel(*, character_id: int, kind: str, key: str = "") -> bool:
    """Finish the active job of ``kind`` as cancelled; a run in flight notices (``job_is_current``)
    and discards its result."""
    active = Job.objects.filter(character_id=character_id, kind=kind, key=key, status__in=Job.ACTIVE)
    return active.update(**_finished_as(outcome="cancelled")) > 0


def _finished_as(*, outcome: str) -> dict[str, Any]:
    """The fields of a job finished without running to the end (cancelled, superseded)."""
    now = timezone.now()
    return {
        "status": WorkStatus.DONE,
        "outcome": outcome,
        "waiting_reason": "",
        "next_attempt_at": None,
        "lease_until": None,
        "finished_at": now,
        "updated_at": now,
    }


def job_supersede(*, character_id: int, kind: str, key: str, within: str = "") -> int:
    """The input of keyed work changed: the jobs of ``kind`` for other keys, active or dead, are moot
    (their failures say nothing about the new input). Finishes them as ``superseded``. ``within``: only
    keys that start with it (one kind keyed per part, e.g. per group-chat subject)."""
    moot = Job.objects.filter(
        character_id=character_id,
        kind=kind,
        key__startswith=within,
        status__in=[WorkStatus.PENDING, WorkStatus.WAITING, WorkStatus.DEAD],
    ).exclude(key=key)
    return moot.update(**_finished_as(outcome="superseded"))


def job_supersede_all_but(*, character_id: int, kind: str, keys: Collection[str]) -> int:
    """``job_supersede`` for work with several live keys at once (refine's clusters): the jobs of
    ``kind`` whose key is none of ``keys`` are moot. Finishes them as ``superseded``."""
    moot = Job.objects.filter(
        character_id=character_id,
        kind=kind,
        status__in=[WorkStatus.PENDING, WorkStatus.WAITING, WorkStatus.DEAD],
    ).exclude(key__in=list(keys))
    return moot.update(**_finished_as(outcome="superseded"))


def job_retry(*, job_id: int, enqueue: bool = True) -> bool:
    """Run a dead or waiting job again now and enqueue it: a dead one with a fresh set of attempts, a
    waiting one (backing off, or parked for a provider) with the attempts it has spent, so a retry
    never stretches its dead-letter budget. False when it is neither, or when another job of its kind
    became active for the character meanwhile."""
    now = timezone.now()
    try:
        with transaction.atomic():
            retried = Job.objects.filter(pk=job_id, status=WorkStatus.DEAD).update(
                status=WorkStatus.PENDING,
                attempts=0,
                waiting_reason="",
                next_attempt_at=None,
                lease_until=None,
                finished_at=None,
                updated_at=now,
            ) or Job.objects.filter(pk=job_id, status=WorkStatus.WAITING).update(
                status=WorkStatus.PENDING, waiting_reason="", next_attempt_at=None, updated_at=now
            )
            if retried and enqueue and not _run_by_schedule(job_id):
                transaction.on_commit(lambda: job_enqueue(job_id=job_id))
    except IntegrityError:
        return False
    return retried == 1


def _run_by_schedule(job_id: int) -> bool:
    """True for a job whose layer's loop runs it (``job_start``): nothing enqueues it."""
    kind = Job.objects.filter(pk=job_id).values_list("kind", flat=True).first()
    spec = job_kind(kind) if kind is not None else None
    return spec is not None and spec.run_by_schedule


def job_run(*, job_id: int) -> str:
    """One run of a job through its kind's handler; returns the job's status afterwards ("busy" when
    another worker holds it or it is finished, ``storage_blocked`` when it was left untouched
    because storage is blocked)."""
    with storage_writer() as allowed:
        if not allowed:
            return STORAGE_BLOCKED
        return _job_run(job_id)


def _job_run(job_id: int) -> str:
    if _run_by_schedule(job_id):
        return "scheduled"
    job = job_claim(job_id=job_id)
    if job is None:
        return "busy"
    spec = job_kind(job.kind)
    if spec is None:
        job_wait(job=job, reason=f"no_handler:{job.kind}"[:60], retry_after=SELF_HEAL_EVERY)
        return WorkStatus.WAITING
    try:
        with change_source(f"job:{job.pk}"):
            outcome = spec.resolve_handler()(job)
    except JobWait as wait:
        job_wait(job=job, reason=wait.reason, retry_after=wait.retry_after)
        return WorkStatus.WAITING
    except StorageBlocked:
        job_wait(job=job, reason=STORAGE_BLOCKED)
        return WorkStatus.WAITING
    except LLMUnavailable:
        job_wait_for_provider(job=job, tier=spec.tier or "summary")
        return WorkStatus.WAITING
    except JobGiveUp as give_up:
        job_give_up(job=job, error=give_up.error, outcome=give_up.outcome)
        return WorkStatus.DEAD
    except Exception as exc:  # every failure is one attempt: LLM errors and database errors alike
        job_fail(job=job, error=exc)
        return str(Job.objects.filter(pk=job_id).values_list("status", flat=True).get())
    # A handler that finished the job in its own transaction already did this; the token makes it a no-op.
    job_succeed(job=job, outcome=outcome or "")
    return str(Job.objects.filter(pk=job_id).values_list("status", flat=True).get())


def _on_dead(job: Job) -> None:
    spec = job_kind(job.kind)
    on_dead = spec.resolve_on_dead() if spec else None
    if on_dead is None:
        return
    try:
        on_dead(job)
    except Exception:
        logger.exception("on_dead of job %s %s failed", job.kind, job.pk)


def jobs_self_heal_probe(*, now: datetime) -> list[int]:
    """Give each dead job of a self-healing kind one more run, at most every 5 hours (reference §3.8).

    The probe is a single attempt: failing it dead-letters the job again until the next probe.
    """
    kinds = [spec.kind for spec in _kinds.values() if spec.self_heal]
    if not kinds:
        return []
    due = Job.objects.filter(status=WorkStatus.DEAD, kind__in=kinds).filter(
        Q(probed_at__lte=now - SELF_HEAL_EVERY)
        | Q(probed_at__isnull=True, finished_at__lte=now - SELF_HEAL_EVERY)
    )
    probed = []
    for job_id in due.values_list("pk", flat=True):
        try:
            with transaction.atomic():
                moved = Job.objects.filter(pk=job_id, status=WorkStatus.DEAD).update(
                    status=WorkStatus.PENDING,
                    attempts=JOB_MAX_ATTEMPTS - 1,
                    probed_at=now,
                    finished_at=None,
                    updated_at=now,
                )
        except IntegrityError:
            continue  # a newer job of the kind is active for the character; it does the work
        if moved:
            probed.append(job_id)
    return probed


@dataclass(frozen=True)
class SweepReport:
    jobs: int = 0
    ops: int = 0
    probed: int = 0


def work_sweep(*, now: datetime | None = None, grace: timedelta = SWEEP_GRACE) -> SweepReport:
    """The one sweep over durable work: expire lost leases, probe dead self-healing jobs, and enqueue
    every job and outbox op that is due. Nothing while storage is blocked."""
    with storage_writer() as allowed:
        if not allowed:
            return SweepReport()
        return _sweep(now=now or timezone.now(), grace=grace)


def _sweep(*, now: datetime, grace: timedelta) -> SweepReport:
    tiers = ready_tiers()
    _lost, dead = work_expire_leases(Job, now=now)
    for job in Job.objects.filter(pk__in=dead):
        _on_dead(job)
    work_expire_leases(OutboxOp, now=now)
    probed = jobs_self_heal_probe(now=now)
    # Materialise the ids first: the ORM broker closes expired connections on every enqueue, which
    # would kill an open server-side cursor mid-loop.
    scheduled = [spec.kind for spec in _kinds.values() if spec.run_by_schedule]
    job_ids = list(
        work_due(Job, now=now, grace=grace, ready_tiers=tiers)
        .exclude(kind__in=scheduled)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    job_ids += [pk for pk in probed if pk not in job_ids]
    for job_id in job_ids:
        job_enqueue(job_id=job_id)
    op_ids = list(
        work_due(OutboxOp, now=now, grace=grace, ready_tiers=tiers)
        .order_by("created_at")
        .values_list("op_id", flat=True)
    )
    outbox_ops_enqueue(op_ids=op_ids)
    # A loop finishes a job every few minutes: its done ones are a record for a while, not forever.
    Job.objects.filter(
        status=WorkStatus.DONE, kind__in=scheduled, finished_at__lt=now - DONE_KEPT_FOR
    ).delete()
    return SweepReport(jobs=len(job_ids), ops=len(op_ids), probed=len(probed))


@dataclass(frozen=True)
class RestartReport:
    released: int = 0
    jobs: int = 0
    ops: int = 0


def work_restart() -> RestartReport:
    """At startup: hand back every lease (no worker of ours runs yet) and enqueue what is due."""
    released = work_release_leases(Job) + work_release_leases(OutboxOp)
    report = work_sweep(grace=timedelta(0))
    return RestartReport(released=released, jobs=report.jobs, ops=report.ops)
