"""Pure helpers for the fact record: ids, hashes, entity mapping, relative event times, file shape.

No ORM queries here: extraction, dedup and import all build facts through these functions, so a fact
looks the same whichever path made it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from facts.models import FACT_SCHEMA_VERSION, Fact
from nekomem.subjects import subject_key_from_extra
from nekomem.timestamps import iso_local, parse_iso

# The original resolves relative times with calendar-free units (month = 30 d, year = 365 d).
EVENT_UNITS: dict[str, timedelta] = {
    "minute": timedelta(minutes=1),
    "hour": timedelta(hours=1),
    "day": timedelta(days=1),
    "week": timedelta(weeks=1),
    "month": timedelta(days=30),
    "year": timedelta(days=365),
}
_LEGACY_ENTITIES = {"user": "master", "ai": "neko"}
DEFAULT_IMPORTANCE = 5


def fact_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def fact_id_for(*, created_at: datetime, hash_: str) -> str:
    # The id carries local wall-clock time, as in the original's files.
    stamp = timezone.localtime(created_at).strftime("%Y%m%d%H%M%S")
    return f"fact_{stamp}_{hash_[:8]}"


def normalize_entity(value: Any) -> str:
    entity = _LEGACY_ENTITIES.get(str(value), str(value))
    return entity if entity in Fact.Entity.values else Fact.Entity.MASTER


def clamp_importance(value: Any) -> int:
    try:
        number = int(float(value))
    except (TypeError, ValueError):
        return DEFAULT_IMPORTANCE
    return max(1, min(10, number))


def _offset(point: Any) -> timedelta | None:
    if not isinstance(point, dict):
        return None
    unit = EVENT_UNITS.get(str(point.get("unit", "")))
    offset = point.get("offset")
    if unit is None or isinstance(offset, bool) or not isinstance(offset, int | float):
        return None
    return unit * offset


def clean_event_when(value: Any) -> dict[str, Any] | None:
    """Keep a relative ``{start, end}`` only when its start is usable; anything else means "no time"."""
    if not isinstance(value, dict) or _offset(value.get("start")) is None:
        return None
    raw_start: dict[str, Any] = value["start"]
    start = {"offset": raw_start["offset"], "unit": raw_start["unit"]}
    end_raw = value.get("end")
    end = None
    if isinstance(end_raw, dict) and _offset(end_raw) is not None:
        end = {"offset": end_raw["offset"], "unit": end_raw["unit"]}
    return {"start": start, "end": end}


def resolve_event_when(
    event_when: dict[str, Any] | None, created_at: datetime
) -> tuple[datetime, datetime | None]:
    """Absolute (start, end): start falls back to created_at; end only when the fact gives one."""
    if not event_when:
        return created_at, None
    start = _offset(event_when.get("start"))
    end = _offset(event_when.get("end"))
    return (
        created_at + start if start is not None else created_at,
        created_at + end if end is not None else None,
    )


@dataclass
class FactDraft:
    """A fact before dedup: what Stage 1 (or an import) proposes."""

    text: str
    importance: int = DEFAULT_IMPORTANCE
    entity: str = Fact.Entity.MASTER
    source: str = Fact.Source.USER_OBSERVATION
    event_when: dict[str, Any] | None = None
    tags: list[Any] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def hash(self) -> str:
        return fact_hash(self.text)


def draft_from_llm(item: Any, *, source: str) -> FactDraft | None:
    """One element of a Stage-1 reply, or None when it has no usable text."""
    if not isinstance(item, dict):
        return None
    text = item.get("text")
    if not isinstance(text, str) or not text.strip():
        return None
    return FactDraft(
        text=text.strip(),
        importance=clamp_importance(item.get("importance")),
        entity=normalize_entity(item.get("entity", "master")),
        source=source,
        event_when=clean_event_when(item.get("event_when")),
    )


def fact_from_draft(*, character_id: int, draft: FactDraft, created_at: datetime) -> Fact:
    hash_ = draft.hash
    start, end = resolve_event_when(draft.event_when, created_at)
    return Fact(
        character_id=character_id,
        fact_id=fact_id_for(created_at=created_at, hash_=hash_),
        text=draft.text,
        importance=draft.importance,
        entity=draft.entity,
        source=draft.source,
        tags=list(draft.tags),
        hash=hash_,
        created_at=created_at,
        event_when_raw=draft.event_when,
        event_start_at=start,
        event_end_at=end,
        # AI disclosures never enter Stage 2, so they start processed (reference §2.4).
        signal_processed=draft.source == Fact.Source.AI_DISCLOSURE,
        schema_version=FACT_SCHEMA_VERSION,
        extra=dict(draft.extra),
        subject_key=subject_key_from_extra(draft.extra),
    )


# --- the file shape (facts.json / facts_archive.json) ------------------------------------------------

FILE_KEYS = (
    "id",
    "text",
    "importance",
    "entity",
    "source",
    "tags",
    "hash",
    "created_at",
    "event_when_raw",
    "event_start_at",
    "event_end_at",
    "schema_version",
    "absorbed",
    "signal_processed",
)
EMBEDDING_KEYS = ("embedding", "embedding_text_sha256", "embedding_model_id")


def fact_to_file_dict(fact: Fact) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": fact.fact_id,
        "text": fact.text,
        "importance": fact.importance,
        "entity": fact.entity,
        "source": fact.source,
        "tags": fact.tags,
        "hash": fact.hash,
        "created_at": iso_local(fact.created_at),
        "event_when_raw": fact.event_when_raw,
        "event_start_at": iso_local(fact.event_start_at),
        "event_end_at": iso_local(fact.event_end_at),
        "schema_version": fact.schema_version,
        "absorbed": fact.absorbed,
        "signal_processed": fact.signal_processed,
    }
    # Unknown and optional keys come back as they were imported; the vector columns win when set.
    record.update(fact.extra)
    if fact.embedding:
        record["embedding"] = fact.embedding
        record["embedding_text_sha256"] = fact.embedding_text_sha256
        record["embedding_model_id"] = fact.embedding_model_id
    return record


def fact_from_file_dict(entry: Any, *, character_id: int, archived: bool) -> Fact:
    """Build an unsaved Fact from one file entry; raises ValueError naming the bad field."""
    if not isinstance(entry, dict):
        raise ValueError(f"expected an object, got {type(entry).__name__}")
    fact_id, text = entry.get("id"), entry.get("text")
    if not isinstance(fact_id, str) or not fact_id:
        raise ValueError("missing or non-string 'id'")
    if not isinstance(text, str):
        raise ValueError("missing or non-string 'text'")
    created_at = parse_iso(entry.get("created_at"))
    if created_at is None:
        raise ValueError("missing 'created_at'")
    tags = entry.get("tags", [])
    if not isinstance(tags, list):
        raise ValueError("'tags' must be a list")
    source = entry.get("source") or Fact.Source.USER_OBSERVATION
    if source not in Fact.Source.values:
        raise ValueError(f"unknown 'source' {source!r}")
    extra = {k: v for k, v in entry.items() if k not in FILE_KEYS}
    vector = {k: extra.pop(k) for k in EMBEDDING_KEYS if isinstance(extra.get(k), str)}
    start = parse_iso(entry.get("event_start_at"))
    return Fact(
        character_id=character_id,
        fact_id=fact_id,
        text=text,
        importance=clamp_importance(entry.get("importance")),
        entity=normalize_entity(entry.get("entity", "master")),
        source=source,
        tags=tags,
        hash=str(entry.get("hash") or fact_hash(text)),
        created_at=created_at,
        event_when_raw=entry.get("event_when_raw"),
        event_start_at=start,
        event_end_at=parse_iso(entry.get("event_end_at")),
        schema_version=int(entry.get("schema_version", 1)),
        absorbed=bool(entry.get("absorbed", False)),
        # Missing is read as true (reference §2.4): old files predate the Stage-2 queue.
        signal_processed=bool(entry.get("signal_processed", True)),
        archived=archived,
        embedding=vector.get("embedding", ""),
        embedding_text_sha256=vector.get("embedding_text_sha256", ""),
        embedding_model_id=vector.get("embedding_model_id", ""),
        extra=extra,
        subject_key=subject_key_from_extra(extra),
    )
