"""Writes to the recent window and the raw time-indexed log (the conversation write path)."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta
from typing import Any, Literal

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from nekomem.characters.locks import lock_character, lock_character_update, settle_lock, settled_transaction
from nekomem.characters.models import Character
from nekomem.characters.services import character_get_or_create
from nekomem.errors import Conflict
from nekomem.journal.services import outbox_op_register
from recent.compression import (
    COMPRESS_THRESHOLD_ITEMS,
    compress_inline,
    compress_job_run,
    compress_request,
    window_hard_cap,
)
from recent.jobs import recent_job_cancel, recent_job_request
from recent.messages import normalise_message
from recent.models import RawMessage, RecentJob, RecentMessage
from recent.review import review_maybe_spawn

POST_TURN_OP = "extract_facts"  # the original's wire name, kept although the op does more
# The original browser's save limits.
MAX_WINDOW_MESSAGES = 10_000
MAX_MESSAGE_CHARS = 32_768
MAX_WINDOW_CHARS = 2_097_152


class WindowChanged(Conflict):
    """The window changed since the editor read it; saving would overwrite someone else's change."""


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


def _activity_fields(*, messages: list[dict[str, Any]], language: str | None) -> dict[str, Any]:
    fields: dict[str, Any] = {"last_activity_at": timezone.now()}
    if language:
        fields["language"] = language[:16]
    if any(m["type"] == "human" for m in messages):
        fields["review_clean"] = False
    return fields


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


CompressMode = Literal["never", "background", "inline"]


def turn_record(
    *,
    name: str,
    messages: list[dict[str, Any]],
    language: str | None,
    append_recent: bool = True,
    compress: CompressMode = "never",
) -> int:
    """Persist one finished turn atomically: recent window, raw log and post-turn op, or nothing.

    ``/cache``, ``/process`` and ``/renew`` append to the window; ``/settle`` only journals the
    messages it was given (they are already in the window from ``/cache``).

    ``compress``: ``/cache`` never compresses; ``/process`` and ``/settle`` ask for a background
    compression (the chat must not wait for an LLM); ``/renew`` summarises while still holding the
    settle lock, so the ``/new_dialog`` that follows it waits for the memo. Every compressing route
    then considers a history review, which always runs in the background.

    Returns the character's id.
    """
    # Only the id is needed: reading it alone skips building a Character (and decoding its JSON
    # card fields) on every turn. A first turn for a name creates the character as before.
    character_id = Character.objects.filter(name=name).values_list("pk", flat=True).first()
    if character_id is None:
        character_id = character_get_or_create(name=name).pk
    inline_failed = False
    write: dict[str, Any] = {"messages": messages, "language": language, "append_recent": append_recent}
    if compress == "inline":
        with settle_lock(character_id):
            with transaction.atomic():
                _turn_write(character_id=character_id, **write)
            inline_failed = not compress_inline(character_id=character_id)
    else:
        # The settle lock is needed only for the write transaction itself: take it scoped to that
        # transaction (one round trip on PostgreSQL instead of a lock and an unlock).
        with settled_transaction(character_id):
            _turn_write(character_id=character_id, **write)
    # Outside the settle lock: a job's task may run right away (django-q sync mode) and its splice
    # takes the lock itself.
    if compress == "background" or inline_failed:
        compress_request(character_id=character_id)
    if compress != "never":
        review_maybe_spawn(character_id=character_id)
    return character_id


def _turn_write(
    *, character_id: int, messages: list[dict[str, Any]], language: str | None, append_recent: bool
) -> None:
    """The turn's one transaction; the caller holds the settle lock and has opened the transaction."""
    # The activity UPDATE is the row lock (one statement instead of SELECT … FOR UPDATE + UPDATE).
    lock_character_update(character_id, **_activity_fields(messages=messages, language=language))
    if not messages:
        return
    if append_recent:
        recent_messages_append(character_id=character_id, messages=messages)
    session_id = raw_log_append(character_id=character_id, messages=messages, timestamp=timezone.now())
    payload: dict[str, Any] = {"messages": messages, "session_id": session_id}
    if language:
        payload["language"] = language
    outbox_op_register(character_id=character_id, op_type=POST_TURN_OP, payload=payload)


# --- idle maintenance ----------------------------------------------------------------------------------

IDLE_AFTER = timedelta(seconds=10)


def _still_idle(*, character_id: int, seen: datetime | None) -> bool:
    last = Character.objects.filter(pk=character_id).values_list("last_activity_at", flat=True).first()
    return last == seen and (last is None or timezone.now() - last >= IDLE_AFTER)


def idle_maintenance_run() -> int:
    """Compress and review characters idle for 10 s or more; returns how many were visited.

    Each step re-checks idleness first, so a character that starts chatting is left alone at once.
    """
    cutoff = timezone.now() - IDLE_AFTER
    idle = Character.objects.filter(last_activity_at__lte=cutoff).values_list("pk", "last_activity_at")
    visited = 0
    for character_id, seen in list(idle):
        if not _still_idle(character_id=character_id, seen=seen):
            continue
        visited += 1
        _idle_compress(character_id=character_id)
        if _still_idle(character_id=character_id, seen=seen):
            review_maybe_spawn(character_id=character_id)
    return visited


def _idle_compress(*, character_id: int) -> None:
    last = RecentJob.objects.filter(character_id=character_id, kind=RecentJob.Kind.COMPRESS).first()
    if last is not None and last.status == RecentJob.Status.DEAD:
        # Covers a worker that died between dead-lettering the job and applying the cap.
        window_hard_cap(character_id=character_id)
    if RecentMessage.objects.filter(character_id=character_id).count() <= COMPRESS_THRESHOLD_ITEMS:
        return
    job, created = recent_job_request(character_id=character_id, kind=RecentJob.Kind.COMPRESS, enqueue=False)
    if created:
        compress_job_run(job_id=job.pk)
