"""Pure helpers for the persona record: ids, evidence view, token cache, and the file shape (§2.10).

Import, the card sync, promotion and corrections all build entries through these functions, so an
entry looks the same whichever path made it.
"""

from __future__ import annotations

import hashlib
from datetime import date, datetime
from typing import Any

from django.utils import timezone

from nekomem.language.counting import count_tokens, tokenizer_identity
from nekomem.subjects import subject_key_from_extra, subject_key_from_section
from nekomem.timestamps import iso_local, parse_iso
from persona.models import PersonaEntry
from reflections.services import Evidence

ENTITY_SECTIONS = ("master", "neko", "relationship")
META_SECTION = "__meta__"
VERSION_HISTORY_MAX = 5


def sha8(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def card_entry_id(entity: str, field: str) -> str:
    return f"card_{sha8(f'{entity}:{field}')}"


def legacy_entry_id(text: str) -> str:
    return f"legacy_{sha8(text)}"


def promoted_entry_id(reflection_id: str) -> str:
    return f"prom_{reflection_id}"


def _stamp(now: datetime) -> str:
    return timezone.localtime(now).strftime("%Y%m%d%H%M%S")


def manual_entry_id(text: str, *, now: datetime) -> str:
    return f"manual_{_stamp(now)}_{sha8(text)}"


def correction_entry_id(text: str, *, now: datetime) -> str:
    return f"corr_{_stamp(now)}_{sha8(text)}"


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def evidence_of(entry: PersonaEntry) -> Evidence:
    return entry.evidence()


def evidence_set(entry: PersonaEntry, evidence: Evidence) -> None:
    entry.evidence_assign(evidence)


def score_of(entry: PersonaEntry, *, now: datetime) -> float:
    return entry.score(now=now)


def token_cache_fresh(entry: PersonaEntry) -> bool:
    return (
        entry.token_count is not None
        and entry.token_count_text_sha256 == text_sha256(entry.text)
        and entry.token_count_tokenizer == tokenizer_identity()
    )


def token_cache_refresh(entry: PersonaEntry) -> bool:
    """Count the entry's tokens unless the cache already matches its text; True when it changed."""
    if token_cache_fresh(entry):
        return False
    entry.token_count = count_tokens(entry.text)
    entry.token_count_text_sha256 = text_sha256(entry.text)
    entry.token_count_tokenizer = tokenizer_identity()
    return True


def version_pushed(history: list[dict[str, Any]], *, text: str, now: datetime, reason: str) -> list[Any]:
    """``history`` plus the replaced ``text``, newest last, at most five items."""
    item = {"text": text, "replaced_at": iso_local(now), "reason": reason, "source_fact_id": None}
    return [*history, item][-VERSION_HISTORY_MAX:]


# --- timestamps as the original writes them --------------------------------------------------------------


def _parse_date(value: Any) -> date | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected an ISO date string, got {type(value).__name__}")
    return date.fromisoformat(value[:10])


# --- the file shape ----------------------------------------------------------------------------------------

_TIME_KEYS = ("suppressed_at", "rein_last_signal_at", "disp_last_signal_at", "last_refine_at")
_OPTIONAL_TIME_KEYS = ("created_at", "archived_at")
_PLAIN_KEYS = (
    "text",
    "source",
    "source_id",
    "recent_mentions",
    "suppress",
    "protected",
    "reinforcement",
    "disputation",
    "sub_zero_days",
    "user_fact_reinforce_count",
    "merged_from_ids",
    "version_history",
    "token_count",
    "token_count_text_sha256",
    "token_count_tokenizer",
    "last_refine_cluster_hash",
)
EMBEDDING_KEYS = ("embedding", "embedding_text_sha256", "embedding_model_id")
FILE_KEYS = (
    "id",
    *_PLAIN_KEYS,
    "sub_zero_last_increment_date",
    *_TIME_KEYS,
    *_OPTIONAL_TIME_KEYS,
    "archive_shard_path",
)
MODEL_FIELDS = (
    "section",
    "position",
    *_PLAIN_KEYS,
    "sub_zero_last_increment_date",
    *_TIME_KEYS,
    *_OPTIONAL_TIME_KEYS,
    "archive_shard_path",
    *EMBEDDING_KEYS,
    "extra",
    "subject_key",
)


def entry_to_file_dict(entry: PersonaEntry) -> dict[str, Any]:
    """The entry as the original writes it: raw R and D, never decayed; unknown keys kept."""
    record: dict[str, Any] = {"id": entry.entry_id}
    for key in _PLAIN_KEYS:
        record[key] = getattr(entry, key)
    record["sub_zero_last_increment_date"] = (
        entry.sub_zero_last_increment_date.isoformat() if entry.sub_zero_last_increment_date else None
    )
    for key in _TIME_KEYS:
        record[key] = iso_local(getattr(entry, key))
    for key in _OPTIONAL_TIME_KEYS:
        if getattr(entry, key) is not None:
            record[key] = iso_local(getattr(entry, key))
    if entry.archive_shard_path:
        record["archive_shard_path"] = entry.archive_shard_path
    for key in EMBEDDING_KEYS:
        record[key] = getattr(entry, key) or None
    for key, value in entry.extra.items():
        record.setdefault(key, value)
    return record


def _number(entry: dict[str, Any], key: str, default: float) -> float:
    value = entry.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key!r} must be a number")
    return float(value)


def _optional_int(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("token_count must be an integer")
    return value


def entry_from_file_dict(raw: Any, *, character_id: int, section: str, position: int) -> PersonaEntry:
    """An unsaved PersonaEntry from one file entry, defaults filled as on load; raises ValueError."""
    if not isinstance(raw, dict):
        raise ValueError(f"expected an object, got {type(raw).__name__}")
    entry_id, text = raw.get("id"), raw.get("text")
    if not isinstance(entry_id, str) or not entry_id:
        raise ValueError("missing or non-string 'id'")
    if not isinstance(text, str):
        raise ValueError("missing or non-string 'text'")
    for key in ("recent_mentions", "merged_from_ids", "version_history"):
        if raw.get(key) is not None and not isinstance(raw.get(key), list):
            raise ValueError(f"{key!r} must be a list")
    entry = PersonaEntry(
        character_id=character_id,
        section=section,
        position=position,
        entry_id=entry_id,
        text=text,
        source=str(raw.get("source") or "manual"),
        source_id=raw.get("source_id"),
        recent_mentions=list(raw.get("recent_mentions") or []),
        suppress=bool(raw.get("suppress", False)),
        protected=bool(raw.get("protected", False)),
        reinforcement=_number(raw, "reinforcement", 0.0),
        disputation=_number(raw, "disputation", 0.0),
        sub_zero_days=int(_number(raw, "sub_zero_days", 0)),
        sub_zero_last_increment_date=_parse_date(raw.get("sub_zero_last_increment_date")),
        user_fact_reinforce_count=int(_number(raw, "user_fact_reinforce_count", 0)),
        merged_from_ids=list(raw.get("merged_from_ids") or []),
        version_history=list(raw.get("version_history") or [])[-VERSION_HISTORY_MAX:],
        token_count=_optional_int(raw.get("token_count")),
        token_count_text_sha256=raw.get("token_count_text_sha256"),
        token_count_tokenizer=raw.get("token_count_tokenizer"),
        embedding=raw.get("embedding") or "",
        embedding_text_sha256=raw.get("embedding_text_sha256") or "",
        embedding_model_id=raw.get("embedding_model_id") or "",
        last_refine_cluster_hash=raw.get("last_refine_cluster_hash"),
        archive_shard_path=raw.get("archive_shard_path"),
    )
    for key in (*_TIME_KEYS, *_OPTIONAL_TIME_KEYS):
        setattr(entry, key, parse_iso(raw.get(key)))
    known = {*FILE_KEYS, *EMBEDDING_KEYS}
    extra = {k: v for k, v in raw.items() if k not in known}
    # An optional key the file spells out as null comes back out the same way.
    extra.update(
        {k: None for k in (*_OPTIONAL_TIME_KEYS, "archive_shard_path") if k in raw and raw[k] is None}
    )
    entry.extra = extra
    entry.subject_key = subject_key_from_section(section) or subject_key_from_extra(extra)
    return entry
