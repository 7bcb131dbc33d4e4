"""Pure helpers for the reflection record: id, evidence view, score, and the file shape (§2.7).

Synthesis, import and event replay all build reflections through these functions, so an entry looks
the same whichever path made it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any

from nekomem.subjects import subject_key_from_extra
from nekomem.timestamps import iso_local, parse_iso
from reflections.evidence import Evidence
from reflections.models import Reflection

TERMINAL_STATUSES = frozenset(
    {
        Reflection.Status.PROMOTED,
        Reflection.Status.DENIED,
        Reflection.Status.ARCHIVED,
        Reflection.Status.MERGED,
        Reflection.Status.PROMOTE_BLOCKED,
    }
)
ACTIVE_STATUSES = (Reflection.Status.PENDING, Reflection.Status.CONFIRMED)
STATUS_STAMPS = {
    Reflection.Status.CONFIRMED: "confirmed_at",
    Reflection.Status.PROMOTED: "promoted_at",
    Reflection.Status.DENIED: "denied_at",
    Reflection.Status.MERGED: "merged_at",
    Reflection.Status.PROMOTE_BLOCKED: "promote_blocked_at",
    Reflection.Status.ARCHIVED: "archived_at",
}
EVIDENCE_FIELDS = (
    "reinforcement",
    "disputation",
    "rein_last_signal_at",
    "disp_last_signal_at",
    "sub_zero_days",
    "user_fact_reinforce_count",
)


def reflection_id_for(fact_ids: Iterable[str]) -> str:
    """``ref_`` + the first 16 hex of sha256 over the sorted ids, each followed by a NUL byte."""
    digest = hashlib.sha256()
    for fact_id in sorted(fact_ids):
        digest.update(fact_id.encode("utf-8") + b"\x00")
    return f"ref_{digest.hexdigest()[:16]}"


def evidence_of(reflection: Reflection) -> Evidence:
    return reflection.evidence()


def evidence_set(reflection: Reflection, evidence: Evidence) -> None:
    reflection.evidence_assign(evidence)


def score_of(reflection: Reflection, *, now: datetime) -> float:
    return reflection.score(now=now)


def evidence_snapshot(reflection: Reflection, *, source: str) -> dict[str, Any]:
    """The ``reflection.evidence_updated`` payload: a full snapshot, so replay is idempotent."""
    return {
        "reflection_id": reflection.reflection_id,
        "reinforcement": reflection.reinforcement,
        "disputation": reflection.disputation,
        "rein_last_signal_at": _iso_aware(reflection.rein_last_signal_at),
        "disp_last_signal_at": _iso_aware(reflection.disp_last_signal_at),
        "sub_zero_days": reflection.sub_zero_days,
        "sub_zero_last_increment_date": _date_iso(reflection.sub_zero_last_increment_date),
        "user_fact_reinforce_count": reflection.user_fact_reinforce_count,
        "source": source,
    }


def evidence_from_snapshot(reflection: Reflection, payload: dict[str, Any]) -> None:
    reflection.reinforcement = float(payload.get("reinforcement", reflection.reinforcement))
    reflection.disputation = float(payload.get("disputation", reflection.disputation))
    reflection.rein_last_signal_at = parse_iso(payload.get("rein_last_signal_at"))
    reflection.disp_last_signal_at = parse_iso(payload.get("disp_last_signal_at"))
    reflection.sub_zero_days = int(payload.get("sub_zero_days", reflection.sub_zero_days))
    reflection.sub_zero_last_increment_date = _parse_date(payload.get("sub_zero_last_increment_date"))
    reflection.user_fact_reinforce_count = int(
        payload.get("user_fact_reinforce_count", reflection.user_fact_reinforce_count)
    )


def _iso_aware(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _date_iso(value: date | None) -> str | None:
    return value.isoformat() if value is not None else None


def _parse_date(value: Any) -> date | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected an ISO date string, got {type(value).__name__}")
    return date.fromisoformat(value[:10])


# --- the file shape (reflections.json and reflection_archive/*.json) --------------------------------

_TIME_KEYS = (
    "created_at",
    "next_eligible_at",
    "event_start_at",
    "event_end_at",
    "rein_last_signal_at",
    "disp_last_signal_at",
    "last_promote_attempt_at",
    "suppressed_at",
    "last_refine_at",
    "confirmed_at",
    "promoted_at",
    "denied_at",
    "merged_at",
    "promote_blocked_at",
    "archived_at",
)
_PLAIN_KEYS = (
    "text",
    "entity",
    "status",
    "source_fact_ids",
    "feedback",
    "relation_type",
    "temporal_scope",
    "subject",
    "event_when_raw",
    "schema_version",
    "reinforcement",
    "disputation",
    "sub_zero_days",
    "user_fact_reinforce_count",
    "absorbed_into",
    "promote_attempt_count",
    "promote_blocked_reason",
    "auto_confirmed",
    "denied_reason",
    "reject_reason",
    "archive_shard_path",
    "recent_mentions",
    "suppress",
    "last_refine_cluster_hash",
)
EMBEDDING_KEYS = ("embedding", "embedding_text_sha256", "embedding_model_id")
# Keys written only when the entry has them (the original adds them on transitions).
_OPTIONAL_KEYS = frozenset(
    {
        "confirmed_at",
        "promoted_at",
        "denied_at",
        "merged_at",
        "promote_blocked_at",
        "archived_at",
        "archive_shard_path",
        "auto_confirmed",
        "denied_reason",
        "reject_reason",
    }
)
FILE_KEYS = ("id", *_PLAIN_KEYS, "sub_zero_last_increment_date", *_TIME_KEYS)
# Compared to decide whether a re-imported entry changes anything.
MODEL_FIELDS = (
    *(key for key in _PLAIN_KEYS),
    "sub_zero_last_increment_date",
    *_TIME_KEYS,
    *EMBEDDING_KEYS,
    "extra",
    "subject_key",
)


def reflection_to_file_dict(reflection: Reflection) -> dict[str, Any]:
    """The entry as the original writes it; raw R and D, never decayed."""
    record: dict[str, Any] = {"id": reflection.reflection_id}
    for key in _PLAIN_KEYS:
        record[key] = getattr(reflection, key)
    record["sub_zero_last_increment_date"] = _date_iso(reflection.sub_zero_last_increment_date)
    for key in _TIME_KEYS:
        record[key] = iso_local(getattr(reflection, key))
    for key in _OPTIONAL_KEYS:
        if record.get(key) in (None, False):
            record.pop(key, None)
    for key, value in reflection.extra.items():
        record.setdefault(key, value)
    if reflection.embedding:
        for key in EMBEDDING_KEYS:
            record[key] = getattr(reflection, key)
    else:
        for key in EMBEDDING_KEYS:
            record.setdefault(key, None)
    return record


def _number(entry: dict[str, Any], key: str, default: float) -> float:
    value = entry.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key!r} must be a number")
    return float(value)


def reflection_from_file_dict(entry: Any, *, character_id: int) -> Reflection:
    """An unsaved Reflection from one file entry, defaults filled as on load; raises ValueError."""
    if not isinstance(entry, dict):
        raise ValueError(f"expected an object, got {type(entry).__name__}")
    reflection_id, text = entry.get("id"), entry.get("text")
    if not isinstance(reflection_id, str) or not reflection_id:
        raise ValueError("missing or non-string 'id'")
    if not isinstance(text, str):
        raise ValueError("missing or non-string 'text'")
    status = entry.get("status", Reflection.Status.PENDING)
    if status not in Reflection.Status.values:
        raise ValueError(f"unknown status {status!r}")
    entity = entry.get("entity", Reflection.Entity.MASTER)
    if entity not in Reflection.Entity.values:
        entity = Reflection.Entity.MASTER
    created_at = parse_iso(entry.get("created_at"))
    if created_at is None:
        raise ValueError("missing 'created_at'")
    source_ids = entry.get("source_fact_ids") or []
    if not isinstance(source_ids, list) or not all(isinstance(s, str) for s in source_ids):
        raise ValueError("'source_fact_ids' must be a list of strings")
    feedback = entry.get("feedback")
    if feedback is not None and feedback not in Reflection.Feedback.values:
        raise ValueError(f"unknown feedback {feedback!r}")
    reflection = Reflection(
        character_id=character_id,
        reflection_id=reflection_id,
        text=text,
        entity=entity,
        status=status,
        source_fact_ids=list(source_ids),
        feedback=feedback,
        relation_type=entry.get("relation_type"),
        temporal_scope=entry.get("temporal_scope"),
        subject=entry.get("subject"),
        event_when_raw=entry.get("event_when_raw"),
        schema_version=int(entry.get("schema_version") or 1),
        reinforcement=_number(entry, "reinforcement", 0.0),
        disputation=_number(entry, "disputation", 0.0),
        sub_zero_days=int(_number(entry, "sub_zero_days", 0)),
        sub_zero_last_increment_date=_parse_date(entry.get("sub_zero_last_increment_date")),
        user_fact_reinforce_count=int(_number(entry, "user_fact_reinforce_count", 0)),
        absorbed_into=entry.get("absorbed_into"),
        promote_attempt_count=int(_number(entry, "promote_attempt_count", 0)),
        promote_blocked_reason=entry.get("promote_blocked_reason"),
        auto_confirmed=bool(entry.get("auto_confirmed", False)),
        denied_reason=entry.get("denied_reason"),
        reject_reason=entry.get("reject_reason"),
        archive_shard_path=entry.get("archive_shard_path"),
        recent_mentions=list(entry.get("recent_mentions") or []),
        suppress=bool(entry.get("suppress", False)),
        last_refine_cluster_hash=entry.get("last_refine_cluster_hash"),
        embedding=entry.get("embedding") or "",
        embedding_text_sha256=entry.get("embedding_text_sha256") or "",
        embedding_model_id=entry.get("embedding_model_id") or "",
    )
    for key in _TIME_KEYS:
        setattr(reflection, key, parse_iso(entry.get(key)))
    known = {*FILE_KEYS, *EMBEDDING_KEYS}
    extra = {k: v for k, v in entry.items() if k not in known}
    # An optional key the file spells out as null/false comes back out the same way.
    extra.update({k: entry[k] for k in _OPTIONAL_KEYS if k in entry and entry[k] in (None, False)})
    reflection.extra = extra
    reflection.subject_key = subject_key_from_extra(extra)
    return reflection
