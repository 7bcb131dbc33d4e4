"""The recent layer's background LLM jobs (compression retries and history reviews), as kinds of the
kernel's job mechanism (``nekomem.journal.jobs``): at most one of each kind is active per character."""

from __future__ import annotations

from datetime import timedelta

from nekomem.journal.jobs import job_active, job_cancel, job_create, register_job_kind
from nekomem.journal.models import Job

COMPRESS_JOB = "recent.compress"
REVIEW_JOB = "recent.review"
# Longer than the longest run we allow: a map-reduce of a hard-capped window is a few dozen calls.
RECENT_JOB_LEASE = timedelta(minutes=30)


def register() -> None:
    register_job_kind(
        COMPRESS_JOB,
        handler="recent.compression.compress_job_handle",
        tier="summary",
        lease=RECENT_JOB_LEASE,
        on_dead="recent.compression.compress_job_dead",
    )
    register_job_kind(
        REVIEW_JOB, handler="recent.review.review_job_handle", tier="correction", lease=RECENT_JOB_LEASE
    )


def recent_job_active(*, character_id: int, kind: str) -> Job | None:
    return job_active(character_id=character_id, kind=kind)


def recent_job_request(*, character_id: int, kind: str, enqueue: bool = True) -> tuple[Job, bool]:
    """The character's active job of ``kind``, or a new pending one (enqueued after commit)."""
    return job_create(character_id=character_id, kind=kind, enqueue=enqueue)


def recent_job_cancel(*, character_id: int, kind: str) -> bool:
    """Cancel the active job of ``kind``; a run in flight notices at its splice and discards its result."""
    return job_cancel(character_id=character_id, kind=kind)
