"""Reads of the kernel's durable work."""

from __future__ import annotations

from django.db.models import QuerySet

from nekomem.journal.models import Job


def job_list(
    *, character_name: str | None = None, kind: str | None = None, status: str | None = None
) -> QuerySet[Job]:
    """Jobs, newest first, optionally of one character, kind or status (the admin's and the API's list)."""
    jobs = Job.objects.select_related("character")
    if character_name:
        jobs = jobs.filter(character__name=character_name)
    if kind:
        jobs = jobs.filter(kind=kind)
    if status:
        jobs = jobs.filter(status=status)
    return jobs.order_by("-created_at", "-pk")


def job_latest(*, character_id: int, kind: str) -> Job | None:
    """The character's most recent job of ``kind``, whatever its status."""
    return Job.objects.filter(character_id=character_id, kind=kind).order_by("-created_at", "-pk").first()
