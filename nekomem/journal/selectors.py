"""Reads of the kernel's durable work."""

from __future__ import annotations

from django.db.models import QuerySet

from nekomem.journal.models import Job, WorkStatus


def job_list(
    *,
    character_name: str | None = None,
    character_id: int | None = None,
    kind: str | None = None,
    status: str | None = None,
) -> QuerySet[Job]:
    """Jobs, newest first, optionally of one character (by name or id), kind or status (the admin's,
    the API's and the memory browser's list)."""
    jobs = Job.objects.select_related("character")
    if character_name:
        jobs = jobs.filter(character__name=character_name)
    if character_id is not None:
        jobs = jobs.filter(character_id=character_id)
    if kind:
        jobs = jobs.filter(kind=kind)
    if status:
        jobs = jobs.filter(status=status)
    return jobs.order_by("-created_at", "-pk")


def job_latest(*, character_id: int, kind: str) -> Job | None:
    """The character's most recent job of ``kind``, whatever its status."""
    return Job.objects.filter(character_id=character_id, kind=kind).order_by("-created_at", "-pk").first()


def job_kinds_of(*, character_id: int) -> list[str]:
    """The kinds of job the character has rows of (for the browser's filter)."""
    kinds = Job.objects.filter(character_id=character_id).order_by("kind").values_list("kind", flat=True)
    return list(kinds.distinct())


def job_unfinished_count(*, character_id: int) -> int:
    """The character's jobs that are not done: queued, running, waiting or dead."""
    return Job.objects.filter(character_id=character_id, status__in=[*Job.ACTIVE, WorkStatus.DEAD]).count()


def job_of_character(*, character_id: int, job_id: int) -> Job | None:
    return Job.objects.filter(pk=job_id, character_id=character_id).first()
