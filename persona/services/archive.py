"""Persona entries in the archive sweep and the shards of ``persona_archive/`` (reference §2.8, §3.5.5).

Only non-protected entries count sub-zero days (at most once per calendar day, never counted down);
at 14 an entry moves into a shard of at most 500 entries. Card entries are never archived.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

from nekomem.characters.locks import lock_character
from nekomem.characters.services import character_memory_changed
from nekomem.errors import Conflict
from nekomem.journal.causes import caused_by
from persona.models import CHANGE_POOL, PersonaArchiveShard, PersonaEntry
from persona.services.entries import entry_event, section_ensure
from persona.services.records import score_of
from reflections.services import ARCHIVE_AFTER_SUB_ZERO_DAYS, reflections_archive_sweep, sub_zero_day_counted

SHARD_CAPACITY = 500


@dataclass(frozen=True)
class SweepReport:
    counted: int = 0
    archived: int = 0


def persona_shard_take(*, character_id: int, name: str | None = None, now: datetime) -> str:
    """Reserve one place in a shard (``name`` when importing); returns the shard name."""
    if name:
        shard, _ = PersonaArchiveShard.objects.get_or_create(
            character_id=character_id, name=name, defaults={"created_at": now}
        )
    else:
        open_shard = (
            PersonaArchiveShard.objects.filter(character_id=character_id, size__lt=SHARD_CAPACITY)
            .order_by("-pk")
            .first()
        )
        shard = open_shard or PersonaArchiveShard.objects.create(
            character_id=character_id,
            name=f"{timezone.localtime(now).date().isoformat()}_{uuid.uuid4().hex[:8]}.json",
            created_at=now,
        )
    PersonaArchiveShard.objects.filter(pk=shard.pk).update(size=F("size") + 1)
    return shard.name


@caused_by("archive")
def persona_archive_sweep(*, character_id: int, now: datetime | None = None) -> SweepReport:
    now = now or timezone.now()
    today = timezone.localtime(now).date()
    counted = 0
    archived: list[int] = []
    with transaction.atomic():
        lock_character(character_id)
        live = PersonaEntry.objects.filter(
            character_id=character_id, protected=False, archive_shard_path__isnull=True
        )
        for entry in live.order_by("pk"):
            days, last = sub_zero_day_counted(
                score=score_of(entry, now=now),
                sub_zero_days=entry.sub_zero_days,
                last_increment_date=entry.sub_zero_last_increment_date,
                today=today,
            )
            if days == entry.sub_zero_days:
                continue
            entry.sub_zero_days, entry.sub_zero_last_increment_date = days, last
            counted += 1
            if entry.sub_zero_days >= ARCHIVE_AFTER_SUB_ZERO_DAYS:
                entry.archive_shard_path = persona_shard_take(character_id=character_id, now=now)
                entry.archived_at = now
                archived.append(entry.pk)
            entry.save()
            entry_event(entry, "persona.entry_updated", reason="archive_sweep")
        if archived:
            character_memory_changed(character_id=character_id, pool=CHANGE_POOL, rows=archived)
    return SweepReport(counted=counted, archived=len(archived))


@dataclass(frozen=True)
class MemoryArchiveReport:
    reflections: SweepReport  # the reflections' sweep reports the same two counts
    persona: SweepReport


def memory_archive_sweep(*, character_id: int, now: datetime | None = None) -> MemoryArchiveReport:
    """One character's whole archive sweep (§3.5.5): its reflections, then its persona entries, as the
    two schedules run them; for ``manage.py archive``."""
    now = now or timezone.now()
    reflections = reflections_archive_sweep(character_id=character_id, now=now)
    return MemoryArchiveReport(
        reflections=SweepReport(counted=reflections.counted, archived=reflections.archived),
        persona=persona_archive_sweep(character_id=character_id, now=now),
    )


def _shard_release(*, character_id: int, name: str) -> None:
    PersonaArchiveShard.objects.filter(character_id=character_id, name=name, size__gt=0).update(
        size=F("size") - 1
    )


def persona_entry_restore(*, character_id: int, entry_id: str, now: datetime | None = None) -> PersonaEntry:
    """Bring an archived entry back into ``persona.json`` (REST, memory browser), at the end of its
    section, with its evidence kept and its sub-zero days counted from zero again (the sweep would
    otherwise archive it on its next day below zero). Raises ``PersonaEntry.DoesNotExist`` for an
    unknown id and ``Conflict`` for an entry that is not archived."""
    now = now or timezone.now()
    with transaction.atomic():
        lock_character(character_id)
        entry = PersonaEntry.objects.filter(character_id=character_id, entry_id=entry_id).first()
        if entry is None:
            raise PersonaEntry.DoesNotExist(entry_id)
        if not entry.archive_shard_path:
            raise Conflict("the entry is not archived")
        _shard_release(character_id=character_id, name=entry.archive_shard_path)
        section_ensure(character_id=character_id, key=entry.section)
        last = PersonaEntry.objects.filter(
            character_id=character_id, section=entry.section, archive_shard_path__isnull=True
        ).aggregate(m=Max("position"))["m"]
        entry.position = 0 if last is None else last + 1
        entry.archive_shard_path = None
        entry.archived_at = None
        entry.sub_zero_days = 0
        entry.sub_zero_last_increment_date = None
        entry.save()
        entry_event(entry, "persona.entry_updated", reason="manual_restore")
        character_memory_changed(character_id=character_id, pool=CHANGE_POOL, rows=[entry.pk])
    return entry
