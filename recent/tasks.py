"""django-q2 entry points of the recent layer: thin, id-based, safe to run twice."""

from __future__ import annotations

from datetime import timedelta

from nekomem.runtime.schedules import ScheduleSpec, register_schedule
from recent.compression import compress_job_run
from recent.jobs import recent_jobs_sweep
from recent.review import review_job_run
from recent.services import idle_maintenance_run


def compress_job(job_id: int) -> str:
    return compress_job_run(job_id=int(job_id))


def review_job(job_id: int) -> str:
    return review_job_run(job_id=int(job_id))


def jobs_sweep() -> int:
    # Jobs younger than a minute are most likely still queued from their on_commit hook.
    return recent_jobs_sweep(older_than=timedelta(minutes=1))


def idle_maintenance() -> int:
    return idle_maintenance_run()


def register_schedules() -> None:
    register_schedule(
        ScheduleSpec(
            name="recent-idle-maintenance",
            func="recent.tasks.idle_maintenance",
            minutes=1,
            description="compress and review the recent window of characters idle for 10 s or more",
        )
    )
    register_schedule(
        ScheduleSpec(
            name="recent-jobs-sweep",
            func="recent.tasks.jobs_sweep",
            minutes=1,
            description="retry pending recent jobs and start waiting ones once a provider is configured",
        )
    )
