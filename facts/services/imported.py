"""Facts brought from another program's Markdown workspace (reference §1.4, §1.7)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db import transaction
from django.utils import timezone

from facts.models import RECALL_POOL, Fact
from facts.services.records import FactDraft, fact_from_draft, normalize_entity
from nekomem.characters.locks import lock_character
from nekomem.characters.services import character_memory_changed

IMPORTED_IMPORTANCE = 7


@dataclass(frozen=True)
class ImportedFact:
    text: str
    entity: str = Fact.Entity.MASTER
    event_date: date | None = None
    source_file: str = ""


@dataclass
class ImportedFacts:
    added: int = 0
    skipped_duplicates: int = 0


def facts_import_append(
    *, character_id: int, items: Sequence[ImportedFact], now: datetime | None = None
) -> ImportedFacts:
    """Append imported lines as facts (importance 7, ``user_observation``) without semantic dedup.

    A line whose text hash is already stored is skipped, so a retry after a partial import adds
    nothing twice. A dated note keeps its day as the event time."""
    now = now or timezone.now()
    report = ImportedFacts()
    with transaction.atomic():
        lock_character(character_id)
        known = set(Fact.with_subjects.filter(character_id=character_id).values_list("hash", flat=True))
        written: list[int] = []
        for item in items:
            draft = FactDraft(
                text=item.text.strip(),
                importance=IMPORTED_IMPORTANCE,
                entity=normalize_entity(item.entity),
                source=Fact.Source.USER_OBSERVATION,
                extra={"imported_from": item.source_file} if item.source_file else {},
            )
            if not draft.text or draft.hash in known:
                report.skipped_duplicates += 1
                continue
            fact = fact_from_draft(character_id=character_id, draft=draft, created_at=now)
            if item.event_date is not None:
                start = timezone.make_aware(datetime.combine(item.event_date, time.min))
                fact.event_start_at = start
                fact.event_end_at = start + timedelta(days=1)
            fact.save()
            known.add(draft.hash)
            written.append(fact.pk)
            report.added += 1
        if written:
            character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=written)
    return report
