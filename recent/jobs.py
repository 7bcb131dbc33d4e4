"""Lifecycle of the recent layer's background LLM jobs (compression retries and history reviews).

A job row is the durable record: it is created in a transaction and its task is enqueued on commit;
the periodic sweep re-enqueues jobs whose task was lost, whose retry is due, or whose provider has
appeared since they started waiting. Runners claim a job (a fresh ``run_token`` and a lease), and
every finishing write is conditional on that token, so a cancelled or re-claimed job is never
overwritten by a stale run.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from nekomem.characters.locks import lock_character
from nekomem.llm import provider_status
from recent.models import RecentJob

logger = logging.getLogger(__name__)

JOB_MAX_ATTEMPTS = 5
# Longer than the longest run we allow: a map-reduce of a hard-capped window is a few dozen calls.
JOB_LEASE = timedelta(minutes=30)
JOB_TASKS = {
    RecentJob.Kind.COMPRESS: "recent.tasks.compress_job",
    RecentJob.Kind.REVIEW: "recent.tasks.review_job",
}
JOB_TIERS = {RecentJob.Kind.COMPRESS: "summary", RecentJob.Kind.REVIEW: "correction"}
_ACTIVE = list(RecentJob.ACTIVE)


def recent_job_active(*, character_id: int, kind: str) -> RecentJob | None:
    return RecentJob.objects.filter(character_id=character_id, kind=kind, status__in=_ACTIVE).first()


def recent_job_request(*, character_id: int, kind: str, enqueue: bool = True) -> tuple[RecentJob, bool]:
    """The character's active job of ``kind``, or a new pending one (enqueued after commit).

    Returns ``(job, created)``. An existing active job is left to its own schedule (a retry waits
    for the sweep), so a failing provider is not hammered once per turn.
    """
    with transaction.atomic():
        lock_character(character_id)
        job = recent_job_active(character_id=character_id, kind=kind)
        if job is not None:
            return job, False
        job = RecentJob.objects.create(character_id=character_id, kind=kind)
        if enqueue:
            job_id = job.pk
            transaction.on_commit(lambda: recent_job_enqueue(job_id=job_id, kind=kind))
    return job, True


def recent_job_enqueue(*, job_id: int, kind: str) -> None:
    from django_q.tasks import async_task

    try:
        async_task(
            JOB_TASKS[RecentJob.Kind(kind)], job_id, task_name=f"recent-{kind}-{job_id}", group="recent"
        )
    except Exception:
        # The job row is durable; the sweep enqueues it again, so a broker hiccup loses nothing.
        logger.exception("could not enqueue recent %s job %s; the sweep will retry it", kind, job_id)


def recent_job_claim(*, job_id: int) -> RecentJob | None:
    """Take a job for one run; None when it is finished, cancelled or leased by another worker."""
    now = timezone.now()
    claimable = Q(status__in=[RecentJob.Status.PENDING, RecentJob.Status.WAITING]) | Q(
        status=RecentJob.Status.RUNNING, lease_until__lt=now
    )
    claimed = (
        RecentJob.objects.filter(claimable, pk=job_id).update(
            status=RecentJob.Status.RUNNING, lease_until=now + JOB_LEASE, run_token=uuid.uuid4()
        )
        == 1
    )
    return RecentJob.objects.get(pk=job_id) if claimed else None


def _current(job: RecentJob):
    return RecentJob.objects.filter(pk=job.pk, run_token=job.run_token, status=RecentJob.Status.RUNNING)


def recent_job_is_current(*, job: RecentJob) -> bool:
    """False once the job was cancelled or re-claimed: the run's result must then be discarded."""
    return _current(job).exists()


def recent_job_done(*, job: RecentJob, outcome: str) -> bool:
    return (
        _current(job).update(
            status=RecentJob.Status.DONE,
            outcome=outcome[:40],
            last_error="",
            lease_until=None,
            finished_at=timezone.now(),
        )
        == 1
    )


def recent_job_wait(*, job: RecentJob, reason: str) -> None:
    """Park the job without spending an attempt: nothing can run until a provider is configured."""
    _current(job).update(status=RecentJob.Status.WAITING, last_error=reason[:2000], lease_until=None)


def recent_job_give_up(*, job: RecentJob, error: Exception, outcome: str) -> None:
    """Finish without retrying: a retry of the same input would fail the same way."""
    _current(job).update(
        status=RecentJob.Status.FAILED,
        attempts=F("attempts") + 1,
        outcome=outcome[:40],
        last_error=_error_text(error),
        lease_until=None,
        finished_at=timezone.now(),
    )


def recent_job_fail(*, job: RecentJob, error: Exception) -> str:
    """Count one failed attempt; the fifth dead-letters the job. Returns the job's new status."""
    updated = _current(job).update(
        status=RecentJob.Status.PENDING,
        attempts=F("attempts") + 1,
        last_error=_error_text(error),
        lease_until=None,
    )
    if not updated:
        return RecentJob.Status.CANCELLED
    dead = RecentJob.objects.filter(
        pk=job.pk, status=RecentJob.Status.PENDING, attempts__gte=JOB_MAX_ATTEMPTS
    ).update(status=RecentJob.Status.DEAD, finished_at=timezone.now())
    logger.warning(
        "recent %s job %s failed (%s)%s",
        job.kind,
        job.pk,
        type(error).__name__,
        "; dead-lettered" if dead else "",
    )
    return RecentJob.Status.DEAD if dead else RecentJob.Status.PENDING


def recent_job_cancel(*, character_id: int, kind: str) -> bool:
    """Cancel the active job of ``kind``; a run in flight notices at its splice and discards its result."""
    return (
        RecentJob.objects.filter(character_id=character_id, kind=kind, status__in=_ACTIVE).update(
            status=RecentJob.Status.CANCELLED, lease_until=None, finished_at=timezone.now()
        )
        > 0
    )


def recent_jobs_due(*, older_than: timedelta = timedelta(seconds=0)) -> list[tuple[int, str]]:
    """Jobs the sweep should run: pending retries, expired leases, and waiting jobs whose tier now has
    a provider."""
    now = timezone.now()
    due = Q(status=RecentJob.Status.PENDING, updated_at__lte=now - older_than) | Q(
        status=RecentJob.Status.RUNNING, lease_until__lt=now
    )
    ready_kinds = [kind for kind, tier in JOB_TIERS.items() if provider_status(tier) is None]
    if ready_kinds:
        due |= Q(status=RecentJob.Status.WAITING, kind__in=ready_kinds)
    return list(RecentJob.objects.filter(due).order_by("pk").values_list("pk", "kind"))


def recent_jobs_sweep(*, older_than: timedelta = timedelta(seconds=0)) -> int:
    due = recent_jobs_due(older_than=older_than)
    for job_id, kind in due:
        recent_job_enqueue(job_id=job_id, kind=kind)
    return len(due)


def _error_text(error: Exception) -> str:
    # LLM exceptions carry metadata only (never the key or memory text); see nekomem.llm.errors.
    return f"{type(error).__name__}: {error}"[:2000]
