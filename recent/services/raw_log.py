"""Writes to the raw time-indexed log: one call's messages under one session id and timestamp.

Every write also counts its rows on the character (``Character.raw_rows_written``), in the same
transaction: a reader that has seen as many rows as the count says has every raw turn, and needs no
query to find out (``recent.services.turn_write``'s statement counts them in its UPDATE).
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from nekomem.characters.services import character_raw_rows_counted
from recent.models import RawMessage


def raw_log_values(
    *, character_id: int, messages: list[dict[str, Any]], timestamp: datetime
) -> list[dict[str, Any]]:
    """One call's messages as raw-log rows: a fresh session id and one shared timestamp."""
    session_id = str(uuid.uuid4())
    return [
        {
            "character_id": character_id,
            "session_id": session_id,
            "message": json.dumps(m, ensure_ascii=False),
            "timestamp": timestamp,
        }
        for m in messages
    ]


def raw_log_append(*, character_id: int, messages: list[dict[str, Any]], timestamp: datetime) -> str:
    """Write one call's messages under a fresh session id and one shared timestamp, and count them;
    returns the session id. Inside the caller's transaction."""
    rows = raw_log_values(character_id=character_id, messages=messages, timestamp=timestamp)
    RawMessage.objects.bulk_create(RawMessage(**row) for row in rows)
    character_raw_rows_counted(character_id=character_id, rows=len(rows))
    return rows[0]["session_id"] if rows else ""
