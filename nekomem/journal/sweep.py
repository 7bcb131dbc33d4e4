"""The one sweep over durable work (every minute, and once a storage block lifts) and the restart at
startup: expire lost leases, probe dead self-healing jobs, enqueue every job and outbox op that is due.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from nekomem.journal.broker import outbox_ops_enqueue
from nekomem.journal.jobs import job_enqueue, job_on_dead, registered_job_kinds
from nekomem.journal.models import Job, OutboxOp, WorkStatus
from nekomem.journal.work import (
    JOB_MAX_ATTEMPTS,
    SELF_HEAL_EVERY,
    SWEEP_GRACE,
    ready_tiers,
    work_due,
    work_expire_leases,
    work_release_leases,
)
from nekomem.runtime.state import storage_writer

# Done jobs of a loop's kind are kept this long as a record; dead work stays until it is retried.
DONE_KEPT_FOR = timedelta(days=7)


def jobs_self_heal_probe(*, now: datetime) -> list[int]:
    """Give each dead job of a self-healing kind one more run, at most every 5 hours (reference §3.8).

    The probe is a single attempt: failing it dead-letters the job again until the next probe.
    """
    kinds = [spec.kind for spec in registered_job_kinds() if spec.self_heal]
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
        job_on_dead(job)
    work_expire_leases(OutboxOp, now=now)
    probed = jobs_self_heal_probe(now=now)
    # Materialise the ids first: the ORM broker closes expired connections on every enqueue, which
    # would kill an open server-side cursor mid-loop.
    scheduled = [spec.kind for spec in registered_job_kinds() if spec.run_by_schedule]
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
