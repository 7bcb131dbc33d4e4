"""Forgetting a time range of the raw log (the user's ask: the conversation is otherwise kept).

The raw turns in the range go, with what copied them: their vectors (cascaded), the recent window's
messages with the same text, and the raw-turn pool of every recall index (logged as removed rows of
that pool, so each process tombstones them at its next query; this one before the call returns).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django.db import transaction

from nekomem.characters.locks import lock_character
from nekomem.characters.services import (
    Forgotten,
    character_memory_changed,
    character_memory_forgotten,
    memory_forgotten_apply,
)
from nekomem.journal.causes import caused_by
from nekomem.journal.redaction import outbox_ops_redact
from recent.models import RawMessage, RecentMessage
from recent.selectors import raw_log_rows

# The name of recall's pool of raw turns in the memory-change log (``recall.selectors.RAW_TURN_POOL``;
# this layer comes before recall and cannot import it).
RAW_TURN_POOL = "raw"
RAW_TURN_VECTOR = "recall.RawTurnVector"  # cascaded from the raw row; counted by its label


class RangeRefused(ValueError):
    """The range cannot be forgotten as asked (HTTP 400); nothing was changed."""


def raw_log_range_check(*, start: datetime | None, end: datetime | None) -> tuple[datetime, datetime]:
    """A forgettable range: both ends given, aware, and ``start`` before ``end`` (raises RangeRefused)."""
    if start is None or end is None:
        raise RangeRefused("start and end are both required")
    if start.tzinfo is None or end.tzinfo is None:
        raise RangeRefused("start and end need a time zone offset")
    if start >= end:
        raise RangeRefused("start must be before end")
    return start, end


def _window_key(kind: object, data: object) -> tuple[str, str] | None:
    content = data.get("content") if isinstance(data, dict) else None
    if content is None:
        return None
    return str(kind), json.dumps(content, ensure_ascii=False, sort_keys=True)


def _raw_key(message: str) -> tuple[str, str] | None:
    try:
        parsed: Any = json.loads(message)
    except ValueError:
        return None
    return _window_key(parsed.get("type"), parsed.get("data")) if isinstance(parsed, dict) else None


@caused_by("forget")
def raw_log_forget(*, character_id: int, start: datetime, end: datetime) -> Forgotten:
    """Delete the raw turns timestamped in [start, end) and every copy of them (module docstring);
    returns the counts. Raises RangeRefused for a bad range (nothing changed)."""
    start, end = raw_log_range_check(start=start, end=end)
    with transaction.atomic():
        lock_character(character_id)
        doomed = list(
            raw_log_rows(character_id=character_id, start=start, end=end).values_list("pk", "message")
        )
        if not doomed:
            return Forgotten(rows={"raw_turns": 0}, copies={})
        keys = {key for _, message in doomed if (key := _raw_key(message)) is not None}
        texts = {text for _, content in keys if isinstance(text := json.loads(content), str)}
        ops = outbox_ops_redact(character_id=character_id, texts=texts)
        window = [
            pk
            for pk, kind, data in RecentMessage.objects.filter(character_id=character_id).values_list(
                "pk", "type", "data"
            )
            if _window_key(kind, data) in keys
        ]
        RecentMessage.objects.filter(pk__in=window).delete()
        pks = [pk for pk, _ in doomed]
        _, by_model = RawMessage.objects.filter(pk__in=pks).delete()
        character_memory_changed(character_id=character_id, pool=RAW_TURN_POOL, rows=pks)
        character_memory_forgotten(character_id=character_id)
    return memory_forgotten_apply(
        character_id=character_id,
        rows={
            "raw_turns": by_model.get(RawMessage._meta.label, 0),
            "vectors": by_model.get(RAW_TURN_VECTOR, 0),
            "window_messages": len(window),
            "queued_copies": ops,
        },
    )
