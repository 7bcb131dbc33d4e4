"""Reads of the facts layer; every query is scoped to one character."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.db.models import Count, Max, Q, QuerySet

from facts.models import ExtractionCursor, Fact, FactDedupPair
from nekomem.subjects import subject_rows


def fact_list(
    *,
    character_id: int,
    entity: str | None = None,
    min_importance: int | None = None,
    absorbed: bool | None = None,
    archived: bool | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
    subject: str = "",
) -> QuerySet[Fact]:
    """Facts filtered for the API and the browser; the time window is on the event start time.
    ``subject`` (the browser's filter, ``nekomem.subjects.subject_rows``): "" the master's facts only."""
    facts = subject_rows(Fact.with_subjects, subject).filter(character_id=character_id)
    if entity:
        facts = facts.filter(entity=entity)
    if min_importance is not None:
        facts = facts.filter(importance__gte=min_importance)
    if absorbed is not None:
        facts = facts.filter(absorbed=absorbed)
    if archived is not None:
        facts = facts.filter(archived=archived)
    if start is not None:
        facts = facts.filter(event_start_at__gte=start)
    if end is not None:
        facts = facts.filter(event_start_at__lt=end)
    return facts.order_by("created_at", "pk")


FactStatus = Literal["active", "absorbed", "archived"]
# active: neither absorbed nor archived; absorbed: consumed by a reflection, not archived yet.
_STATUS_FLAGS: dict[FactStatus, tuple[bool | None, bool]] = {
    "active": (False, False),
    "absorbed": (True, False),
    "archived": (None, True),
}


def facts_browse(
    *,
    character_id: int,
    text: str = "",
    entity: str | None = None,
    status: FactStatus | None = None,
    min_importance: int | None = None,
    subject: str = "",
) -> QuerySet[Fact]:
    """The memory browser's fact list, newest first (index fact_char_created serves the order)."""
    absorbed, archived = _STATUS_FLAGS[status] if status else (None, None)
    facts = fact_list(
        character_id=character_id,
        entity=entity,
        min_importance=min_importance,
        absorbed=absorbed,
        archived=archived,
        subject=subject,
    )
    if text:
        facts = facts.filter(text__icontains=text)
    return facts.order_by("-created_at", "-pk")


def fact_count(*, character_id: int) -> int:
    return Fact.objects.filter(character_id=character_id).count()


def fact_get(*, character_id: int, fact_id: str) -> Fact | None:
    return Fact.objects.filter(character_id=character_id, fact_id=fact_id).first()


def facts_known_since(*, character_id: int, since: datetime, limit: int) -> list[str]:
    """Path B's "known facts" pool: texts created at or after ``since``, most important first."""
    rows = (
        Fact.objects.filter(character_id=character_id, created_at__gte=since)
        .order_by("-importance", "created_at")
        .values_list("text", flat=True)[:limit]
    )
    return list(rows)


def _pairs_waiting(*, character_id: int) -> QuerySet[FactDedupPair]:
    """Pending pairs whose two facts both still exist: what the arbitration will decide."""
    return FactDedupPair.objects.filter(
        character_id=character_id,
        status=FactDedupPair.Status.PENDING,
        candidate__isnull=False,
        existing__isnull=False,
    )


def dedup_pairs_pending(*, character_id: int, limit: int) -> list[FactDedupPair]:
    return list(
        _pairs_waiting(character_id=character_id)
        .select_related("candidate", "existing")
        .order_by("queued_at", "pk")[:limit]
    )


def fact_vector_missing(model_id: str) -> Q:
    """Facts with no vector, or one of another model. The model test is two ranges rather than
    ``~Q(embedding_model_id=model_id)``: PostgreSQL answers ``<>`` with a table scan, the ranges (and
    the empty vector) from the partial indexes ``fact_open_vector_model`` and ``fact_open_unvectored``
    when the query also asks for open facts (``archived=False``)."""
    return Q(embedding="") | Q(embedding_model_id__lt=model_id) | Q(embedding_model_id__gt=model_id)


def dedup_pairs_pending_count(*, character_id: int) -> int:
    return _pairs_waiting(character_id=character_id).count()


def dedup_pairs_for_export(*, character_id: int) -> QuerySet[FactDedupPair]:
    """The pending queue as ``facts_pending_dedup.json`` holds it, in insertion order (so an imported
    file comes back in its own order)."""
    return FactDedupPair.objects.filter(
        character_id=character_id, status=FactDedupPair.Status.PENDING
    ).order_by("pk")


def characters_with_pending_pairs() -> list[int]:
    return list(
        FactDedupPair.objects.filter(status=FactDedupPair.Status.PENDING)
        .values_list("character_id", flat=True)
        .distinct()
        .order_by("character_id")
    )


def extraction_cursor(*, character_id: int) -> ExtractionCursor | None:
    return ExtractionCursor.objects.filter(character_id=character_id).first()


def fact_subject_counts(*, character_id: int) -> dict[str, dict[str, Any]]:
    """Per subject key: active and archived fact counts and the newest write."""
    rows = (
        Fact.with_subjects.filter(character_id=character_id)
        .exclude(subject_key="")
        .values("subject_key", "archived")
        .annotate(n=Count("pk"), last=Max("created_at"))
    )
    counts: dict[str, dict[str, Any]] = {}
    for row in rows:
        entry = counts.setdefault(row["subject_key"], {"active": 0, "archived": 0, "last": None})
        entry["archived" if row["archived"] else "active"] += row["n"]
        if entry["last"] is None or row["last"] > entry["last"]:
            entry["last"] = row["last"]
    return counts


def fact_speaker_ids(*, character_id: int) -> set[str]:
    """The speaker ids that this character's group-chat facts carry as provenance (§2.4)."""
    rows = Fact.with_subjects.filter(character_id=character_id).exclude(subject_key="")
    return {
        value
        for value in rows.filter(extra__has_key="speaker_id").values_list("extra__speaker_id", flat=True)
        if isinstance(value, str) and value
    }


def facts_spoken_by_count(*, character_id: int, speaker_id: str, excluding_subject_keys: list[str]) -> int:
    """Group-chat facts that ``speaker_id`` said but that are stored under other subjects."""
    return (
        Fact.with_subjects.filter(character_id=character_id, extra__speaker_id=speaker_id)
        .exclude(subject_key="")
        .exclude(subject_key__in=excluding_subject_keys)
        .count()
    )


def fact_ids_live(character_id: int) -> list[str]:
    """The ids of the character's Fact rows that exist (a group-chat subject's and archived ones
    included): compaction keeps their last versions in the journal (``register_live_rows``)."""
    return list(Fact.with_subjects.filter(character_id=character_id).values_list("fact_id", flat=True))
