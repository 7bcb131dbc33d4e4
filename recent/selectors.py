from __future__ import annotations

import hashlib
import json
from datetime import datetime

from django.db.models import Max

from recent.models import RawMessage, RecentMessage


def recent_window(*, character_id: int) -> list[RecentMessage]:
    return list(RecentMessage.objects.filter(character_id=character_id).order_by("position"))


def recent_window_dicts(*, character_id: int) -> list[dict]:
    return [m.as_langchain() for m in recent_window(character_id=character_id)]


def window_fingerprint(messages: list[dict]) -> str:
    """An opaque token for one state of the window (optimistic concurrency for manual edits)."""
    canonical = json.dumps([(m["type"], m["data"].get("content")) for m in messages], ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def raw_log_last_timestamp(*, character_id: int) -> datetime | None:
    return RawMessage.objects.filter(character_id=character_id).aggregate(last=Max("timestamp"))["last"]


def raw_log_between(
    *, character_id: int, start: datetime | None = None, end: datetime | None = None, limit: int | None = None
) -> list[RawMessage]:
    """Rows ordered by (timestamp, id), the original's ``BETWEEN … ORDER BY timestamp, rowid``."""
    rows = RawMessage.objects.filter(character_id=character_id)
    if start is not None:
        rows = rows.filter(timestamp__gte=start)
    if end is not None:
        rows = rows.filter(timestamp__lte=end)
    rows = rows.order_by("timestamp", "id")
    return list(rows[:limit] if limit else rows)
