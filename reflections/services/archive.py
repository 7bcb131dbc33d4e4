"""The archive sweep and the shards of ``reflection_archive/`` (reference §2.8, §3.5.5).

Once an hour, for every character: each non-terminal reflection whose score is below zero counts one
more "sub-zero day" (at most once per calendar day, never counted down); at 14 it is archived.
Promoted and denied reflections older than 30 days move to the shards too. A shard holds at most 500
entries; a full one is followed by a new ``<YYYY-MM-DD>_<uuid8>.json``.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from nekomem.characters.locks import lock_character
from nekomem.characters.services import character_memory_changed
from nekomem.errors import Conflict
from nekomem.journal.causes import caused_by
from nekomem.journal.services import event_append
from reflections.evidence import ARCHIVE_AFTER_SUB_ZERO_DAYS, sub_zero_day_counted
from reflections.models import RECALL_POOL, ArchiveShard, Reflection
from reflections.services.lifecycle import reflection_fields_set, reflection_locked, reflection_transition
from reflections.services.records import ACTIVE_STATUSES, evidence_snapshot, score_of

SHARD_CAPACITY = 500
TERMINAL_RETENTION = timedelta(days=30)


@dataclass(frozen=True)
class SweepReport:
    counted: int = 0
    archived: int = 0


def shard_name(*, now: datetime) -> str:
    return f"{timezone.localtime(now).date().isoformat()}_{uuid.uuid4().hex[:8]}.json"


def _open_shard(*, character_id: int, now: datetime) -> ArchiveShard:
    shard = (
        ArchiveShard.objects.filter(character_id=character_id, size__lt=SHARD_CAPACITY)
        .order_by("-pk")
        .first()
    )
    if shard is None:
        shard = ArchiveShard.objects.create(
            character_id=character_id, name=shard_name(now=now), created_at=now
        )
    return shard


def shard_take(*, character_id: int, name: str | None = None, now: datetime) -> str:
    """Reserve one place in a shard (``name`` when replaying or importing); returns the shard name."""
    if name:
        shard, _ = ArchiveShard.objects.get_or_create(
            character_id=character_id, name=name, defaults={"created_at": now}
        )
    else:
        shard = _open_shard(character_id=character_id, now=now)
    ArchiveShard.objects.filter(pk=shard.pk).update(size=F("size") + 1)
    return shard.name


def _shard_release(*, character_id: int, name: str | None) -> None:
    if name:
        ArchiveShard.objects.filter(character_id=character_id, name=name, size__gt=0).update(
            size=F("size") - 1
        )


def reflection_archive_into_shard(*, reflection: Reflection, now: datetime, reason: str) -> None:
    """Inside the caller's locked transaction: status archived, stamped, placed in a shard."""
    name = shard_take(character_id=reflection.character_id, now=now)
    if reflection.status in ACTIVE_STATUSES:
        reflection_transition(
            reflection=reflection,
            to=Reflection.Status.ARCHIVED,
            now=now,
            reason=reason,
            also={"archive_shard_path": name},
        )
        return
    # Promoted and denied entries keep their status; only their place changes (the original moves the
    # entry into a shard file unchanged apart from the two stamps).
    reflection_fields_set(
        reflection=reflection, now=now, reason=reason, fields={"archived_at": now, "archive_shard_path": name}
    )
    # Out of recall's pool either way; reported so that the history versions the move too.
    character_memory_changed(character_id=reflection.character_id, pool=RECALL_POOL, rows=[reflection.pk])


@caused_by("archive")
def reflections_archive_sweep(*, character_id: int, now: datetime | None = None) -> SweepReport:
    now = now or timezone.now()
    today = timezone.localtime(now).date()
    counted = archived = 0
    with transaction.atomic():
        lock_character(character_id)
        active = Reflection.objects.filter(character_id=character_id, status__in=ACTIVE_STATUSES)
        for reflection in active.order_by("pk"):
            days, last = sub_zero_day_counted(
                score=score_of(reflection, now=now),
                sub_zero_days=reflection.sub_zero_days,
                last_increment_date=reflection.sub_zero_last_increment_date,
                today=today,
            )
            if days != reflection.sub_zero_days:
                reflection.sub_zero_days, reflection.sub_zero_last_increment_date = days, last
                reflection.save(update_fields=["sub_zero_days", "sub_zero_last_increment_date", "updated_at"])
                event_append(
                    character_id=character_id,
                    event_type="reflection.evidence_updated",
                    payload=evidence_snapshot(reflection, source="archive_sweep"),
                )
                counted += 1
            if reflection.sub_zero_days >= ARCHIVE_AFTER_SUB_ZERO_DAYS:
                reflection_archive_into_shard(reflection=reflection, now=now, reason="sub_zero_days")
                archived += 1
        stale = Reflection.objects.filter(
            Q(status=Reflection.Status.PROMOTED, promoted_at__lt=now - TERMINAL_RETENTION)
            | Q(status=Reflection.Status.DENIED, denied_at__lt=now - TERMINAL_RETENTION),
            character_id=character_id,
            archive_shard_path__isnull=True,
        )
        for reflection in stale.order_by("pk"):
            reflection_archive_into_shard(reflection=reflection, now=now, reason="terminal_retention")
            archived += 1
    return SweepReport(counted=counted, archived=archived)


def reflection_archive(*, character_id: int, reflection_id: str, now: datetime | None = None) -> Reflection:
    """Archive by hand (REST, admin): any entry not yet in a shard."""
    now = now or timezone.now()
    with transaction.atomic():
        reflection = reflection_locked(character_id=character_id, reflection_id=reflection_id)
        if reflection.archive_shard_path:
            raise Conflict("the reflection is already archived")
        reflection_archive_into_shard(reflection=reflection, now=now, reason="manual")
    return reflection


def reflection_restore(*, character_id: int, reflection_id: str, now: datetime | None = None) -> Reflection:
    """Bring an archived reflection back as pending, out of its shard (its evidence is kept)."""
    now = now or timezone.now()
    with transaction.atomic():
        reflection = reflection_locked(character_id=character_id, reflection_id=reflection_id)
        if not reflection.archive_shard_path:
            raise Conflict("the reflection is not archived")
        _shard_release(character_id=character_id, name=reflection.archive_shard_path)
        reflection_transition(
            reflection=reflection,
            to=Reflection.Status.PENDING,
            now=now,
            reason="manual_restore",
            also={"archive_shard_path": None, "archived_at": None, "sub_zero_days": 0},
        )
    return reflection
