"""Idle maintenance: compress and review the windows of characters that stopped chatting."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.utils import timezone

from nekomem.characters.models import Character
from nekomem.journal.selectors import job_latest
from recent.compression import compress_request, window_hard_cap
from recent.jobs import COMPRESS_JOB
from recent.review import review_maybe_spawn

IDLE_AFTER = timedelta(seconds=10)


def _still_idle(*, character_id: int, seen: datetime | None) -> bool:
    last = Character.objects.filter(pk=character_id).values_list("last_activity_at", flat=True).first()
    return last == seen and (last is None or timezone.now() - last >= IDLE_AFTER)


def idle_maintenance_run() -> int:
    """Compress and review characters idle for 10 s or more; returns how many were visited.

    Each step re-checks idleness first, so a character that starts chatting is left alone at once.
    """
    cutoff = timezone.now() - IDLE_AFTER
    idle = Character.objects.filter(last_activity_at__lte=cutoff).values_list("pk", "last_activity_at")
    visited = 0
    for character_id, seen in list(idle):
        if not _still_idle(character_id=character_id, seen=seen):
            continue
        visited += 1
        _idle_compress(character_id=character_id)
        if _still_idle(character_id=character_id, seen=seen):
            review_maybe_spawn(character_id=character_id)
    return visited


def _idle_compress(*, character_id: int) -> None:
    last = job_latest(character_id=character_id, kind=COMPRESS_JOB)
    if last is not None and last.status == last.Status.DEAD:
        # Covers a worker that died between dead-lettering the job and applying the cap.
        window_hard_cap(character_id=character_id)
    # A new job runs here, in this worker; one waiting for a provider gets the window capped instead.
    compress_request(character_id=character_id, run_here=True)
