"""Window positions and the window's rows: appends, and the memory browser's whole-window save."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import F

from nekomem.characters.locks import lock_character, lock_character_update, settle_lock
from nekomem.characters.models import Character
from nekomem.errors import Conflict
from recent.jobs import recent_job_cancel
from recent.messages import normalise_message
from recent.models import RecentJob, RecentMessage

# The original browser's save limits.
MAX_WINDOW_MESSAGES = 10_000
MAX_MESSAGE_CHARS = 32_768
MAX_WINDOW_CHARS = 2_097_152


class WindowChanged(Conflict):
    """The window changed since the editor read it; saving would overwrite someone else's change."""


def recent_positions_take(*, character_id: int, count: int, **also_update: Any) -> int:
    """Take ``count`` consecutive window positions from the character's counter; returns the first.

    The UPDATE is the row lock (see ``lock_character_update``), so call it inside a transaction, and
    ``also_update`` lets the caller's own UPDATE of the character row ride along.
    """
    lock_character_update(character_id, recent_next_position=F("recent_next_position") + count, **also_update)
    after = Character.objects.filter(pk=character_id).values_list("recent_next_position", flat=True).get()
    return after - count


def recent_messages_insert(*, character_id: int, first_position: int, messages: list[dict[str, Any]]) -> None:
    RecentMessage.objects.bulk_create(
        RecentMessage(character_id=character_id, position=first_position + i, type=m["type"], data=m["data"])
        for i, m in enumerate(messages)
    )


def recent_messages_append(*, character_id: int, messages: list[dict[str, Any]]) -> None:
    """Append to the window, inside a transaction (it takes the row lock)."""
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
    recent_job_cancel(character_id=character_id, kind=RecentJob.Kind.REVIEW)
    with settle_lock(character_id), transaction.atomic():
        lock_character(character_id)
        current = recent_window_dicts(character_id=character_id)
        if expected_fingerprint is not None and expected_fingerprint != window_fingerprint(current):
            raise WindowChanged("the recent window changed since it was read; reload and edit again")
        RecentMessage.objects.filter(character_id=character_id).delete()
        recent_messages_append(character_id=character_id, messages=messages)
        Character.objects.filter(pk=character_id).update(review_clean=False)
    return messages
