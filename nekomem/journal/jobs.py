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
retried and dead-lettered by the same functions (``nekomem.journal.work``), which work on any
``DurableWork`` model; ``nekomem.journal.sweep`` re-enqueues what is due.

Layers register their job kinds from ``AppConfig.ready()``; the kernel imports no layer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.module_loading import import_string

from nekomem.characters.locks import lock_character
from nekomem.journal.broker import task_enqueue
from nekomem.journal.causes import change_source
from nekomem.journal.models import Job, WorkStatus
from nekomem.journal.work import (
    DEFAULT_LEASE,
    NO_PROVIDER,
    SELF_HEAL_EVERY,
    SWEEP_GRACE,
    backoff_delay,
    error_text,
    no_provider_reason,
    ready_tiers,
    work_claim,
    work_current,
    work_fail,
    work_succeed,
    work_wait,
)
from nekomem.llm import LLMUnavailable
from nekomem.runtime.state import STORAGE_BLOCKED, StorageBlocked, storage_writer

logger = logging.getLogger(__name__)

JOB_TASK = "nekomem.journal.tasks.job_run"


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
        job_on_dead(job)
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
        job_on_dead(job)
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


def job_on_dead(job: Job) -> None:
    """Run the kind's ``on_dead`` for a job just dead-lettered; its failure is logged, not raised."""
    spec = job_kind(job.kind)
    on_dead = spec.resolve_on_dead() if spec else None
    if on_dead is None:
        return
    try:
        on_dead(job)
    except Exception:
        logger.exception("on_dead of job %s %s failed", job.kind, job.pk)
