"""Writes to the recent window and the raw time-indexed log (the conversation write path)."""

from __future__ import annotations

import json
import uuid
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from nekomem.characters.locks import lock_character, settle_lock
from nekomem.characters.models import Character
from nekomem.characters.services import character_get_or_create
from nekomem.journal.services import outbox_op_register
from recent.models import RawMessage, RecentMessage

POST_TURN_OP = "extract_facts"  # the original's wire name, kept although the op does more


def recent_messages_append(*, character_id: int, messages: list[dict[str, Any]]) -> None:
    """Append to the window; call under the character's lock."""
    if not messages:
        return
    top = RecentMessage.objects.filter(character_id=character_id).aggregate(top=Max("position"))["top"]
    start = 0 if top is None else top + 1
    RecentMessage.objects.bulk_create(
        RecentMessage(character_id=character_id, position=start + i, type=m["type"], data=m["data"])
        for i, m in enumerate(messages)
    )


def raw_log_append(*, character_id: int, messages: list[dict[str, Any]], timestamp: datetime) -> str:
    """Write one call's messages under a fresh session id and one shared timestamp."""
    session_id = str(uuid.uuid4())
    RawMessage.objects.bulk_create(
        RawMessage(
            character_id=character_id,
            session_id=session_id,
            message=json.dumps(m, ensure_ascii=False),
            timestamp=timestamp,
        )
        for m in messages
    )
    return session_id


def _mark_activity(*, character: Character, messages: list[dict[str, Any]], language: str | None) -> None:
    fields: dict[str, Any] = {"last_activity_at": timezone.now()}
    if language:
        fields["language"] = language[:16]
    if any(m["type"] == "human" for m in messages):
        fields["review_clean"] = False
    Character.objects.filter(pk=character.pk).update(**fields)


def turn_record(
    *, name: str, messages: list[dict[str, Any]], language: str | None, append_recent: bool = True
) -> Character:
    """Persist one finished turn atomically: recent window, raw log and post-turn op, or nothing.

    ``/cache``, ``/process`` and ``/renew`` append to the window; ``/settle`` only journals the
    messages it was given (they are already in the window from ``/cache``).
    """
    character = character_get_or_create(name=name)
    with settle_lock(character.pk), transaction.atomic():
        lock_character(character.pk)
        _mark_activity(character=character, messages=messages, language=language)
        if not messages:
            return character
        if append_recent:
            recent_messages_append(character_id=character.pk, messages=messages)
        session_id = raw_log_append(character_id=character.pk, messages=messages, timestamp=timezone.now())
        payload: dict[str, Any] = {"messages": messages, "session_id": session_id}
        if language:
            payload["language"] = language
        outbox_op_register(character_id=character.pk, op_type=POST_TURN_OP, payload=payload)
    return character
