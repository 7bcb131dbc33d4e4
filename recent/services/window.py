"""Window positions and the window's rows: appends, and the memory browser's whole-window save."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import F

from nekomem.characters.locks import lock_character, settle_lock
from nekomem.errors import Conflict
from recent.jobs import REVIEW_JOB, recent_job_cancel
from recent.messages import normalise_message
from recent.models import RecentMessage, RecentWindowState
from recent.services.history import memo_changed, memo_text

# The original browser's save limits.
MAX_WINDOW_MESSAGES = 10_000
MAX_MESSAGE_CHARS = 32_768
MAX_WINDOW_CHARS = 2_097_152


class WindowChanged(Conflict):
    """The window changed since the editor read it; saving would overwrite someone else's change."""


def recent_positions_take(*, character_id: int, count: int, clear_review: bool = False) -> int:
    """Take ``count`` consecutive window positions from the counter; returns the first.

    The caller holds the character's row lock in its transaction, so the counter row is created at
    most once; ``clear_review`` marks the window as worth reviewing again (a new human message).
    """
    also: dict[str, Any] = {"review_clean": False} if clear_review else {}
    states = RecentWindowState.objects.filter(pk=character_id)
    if not states.update(next_position=F("next_position") + count, **also):
        RecentWindowState.objects.create(character_id=character_id, next_position=count)
    return states.values_list("next_position", flat=True).get() - count


def recent_messages_insert(*, character_id: int, first_position: int, messages: list[dict[str, Any]]) -> None:
    RecentMessage.objects.bulk_create(
        RecentMessage(character_id=character_id, position=first_position + i, type=m["type"], data=m["data"])
        for i, m in enumerate(messages)
    )


def recent_messages_append(*, character_id: int, messages: list[dict[str, Any]]) -> None:
    """Append to the window; the caller holds the character's row lock in its transaction."""
    if not messages:
        return
    first = recent_positions_take(character_id=character_id, count=len(messages))
    recent_messages_insert(character_id=character_id, first_position=first, messages=messages)


def recent_window_replace(
    *, character_id: int, chat: list[tuple[str, str]], expected_fingerprint: str | None
) -> list[dict[str, Any]]:
    """Replace the whole window with a manually edited one (the memory browser's save).

    Any review in flight is cancelled first, since its result was computed from the old window.
    """
    from recent.selectors import recent_window_dicts, window_fingerprint

    messages = [
        normalise_message({"type": role, "data": {"content": text}}, i) for i, (role, text) in enumerate(chat)
    ]
    recent_job_cancel(character_id=character_id, kind=REVIEW_JOB)
    with settle_lock(character_id), transaction.atomic():
        lock_character(character_id)
        current = recent_window_dicts(character_id=character_id)
        if expected_fingerprint is not None and expected_fingerprint != window_fingerprint(current):
            raise WindowChanged("the recent window changed since it was read; reload and edit again")
        before = memo_text(character_id)
        RecentMessage.objects.filter(character_id=character_id).delete()
        recent_messages_append(character_id=character_id, messages=messages)
        memo_changed(character_id=character_id, before=before)
        RecentWindowState.objects.filter(pk=character_id).update(review_clean=False)
    return messages
