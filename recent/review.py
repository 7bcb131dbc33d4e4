"""Recent-history review, "记忆整理" (reference §3.1.5).

A gated background job asks the ``correction`` tier to tidy the recent window (contradictions,
repetition, confusion) and splices the corrected dialogue back by fingerprint: the snapshot's last
three messages locate it in the current window, so turns appended meanwhile survive, and slots that
changed meanwhile are never overwritten.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from nekomem.characters.language import character_language
from nekomem.characters.locks import character_row_ensure, lock_character, settle_lock
from nekomem.characters.models import Character
from nekomem.journal.causes import change_cause
from nekomem.journal.jobs import JobGiveUp, job_is_current, job_succeed
from nekomem.journal.models import Job
from nekomem.language.resolution import master_display_name
from nekomem.llm import LLMError, LLMTruncated, LLMUnavailable, chat_json
from nekomem.runtime.switches import RECENT_AUTO_REVIEW, switch_enabled
from recent import prompts
from recent.jobs import REVIEW_JOB, recent_job_active, recent_job_cancel, recent_job_request
from recent.messages import content_text
from recent.models import RecentMessage, RecentReviewState, RecentWindowState
from recent.services.history import memo_changed, memo_text

logger = logging.getLogger(__name__)

REVIEW_MIN_LENGTH = 8
REVIEW_MIN_INTERVAL = timedelta(seconds=60)
REVIEW_MIN_NEW_HUMAN = 5
REVIEW_IDLE_BYPASS = timedelta(minutes=30)
REVIEW_MAX_STRIKES = 3
FINGERPRINT_SIZE = 3
FINGERPRINT_PREFIX_CHARS = 50
REVIEW_TIER = "correction"

_ROLES = {
    "human": "human",
    "user": "human",
    "ai": "ai",
    "assistant": "ai",
    "system": "system",
}


@dataclass(frozen=True)
class Turn:
    """One message of a review: its row (None for the LLM's output), type and text."""

    row_id: int | None
    position: int | None
    type: str
    text: str

    @property
    def fingerprint(self) -> tuple[str, str, str]:
        digest = hashlib.sha256(self.text.encode("utf-8")).hexdigest()
        return (self.type, self.text[:FINGERPRINT_PREFIX_CHARS], digest)


def _turns(rows: list[RecentMessage]) -> list[Turn]:
    return [
        Turn(row_id=r.pk, position=r.position, type=r.type, text=content_text(r.data.get("content")))
        for r in rows
    ]


def _window(character_id: int) -> list[RecentMessage]:
    return list(RecentMessage.objects.filter(character_id=character_id).order_by("position"))


# --- gates ---------------------------------------------------------------------------------------------


def review_gate(
    *, character: Character, window: list[RecentMessage], state: RecentReviewState, now: datetime
) -> str:
    """Why a review must not start now, or "" when every gate passes."""
    if not switch_enabled(RECENT_AUTO_REVIEW):
        return "switched_off"
    if RecentWindowState.objects.filter(pk=character.pk, review_clean=True).exists():
        return "clean"
    if len(window) < REVIEW_MIN_LENGTH:
        return "too_short"
    if state.paused_at_length is not None and len(window) >= state.paused_at_length:
        return "paused_after_truncations"
    if state.last_started_at is not None and now - state.last_started_at < REVIEW_MIN_INTERVAL:
        return "interval"
    if recent_job_active(character_id=character.pk, kind=REVIEW_JOB) is not None:
        return "running"
    return _new_messages_gate(character=character, window=window, state=state, now=now)


def _new_messages_gate(
    *, character: Character, window: list[RecentMessage], state: RecentReviewState, now: datetime
) -> str:
    cutoff = state.cutoff_position if state.cutoff_position is not None else -1
    # The memo is not a new message: compression gives it the position of the last summarised one.
    new = [m for m in window if m.position > cutoff and m.type != RecentMessage.Kind.SYSTEM]
    if sum(1 for m in new if m.type == RecentMessage.Kind.HUMAN) >= REVIEW_MIN_NEW_HUMAN:
        return ""
    idle = character.last_activity_at is None or now - character.last_activity_at >= REVIEW_IDLE_BYPASS
    return "" if new and idle else "too_few_new_messages"


def review_maybe_spawn(*, character_id: int) -> Job | None:
    """Start a background review when the gates pass; returns the new job."""
    now = timezone.now()
    with transaction.atomic():
        character = lock_character(character_id)
        state = character_row_ensure(RecentReviewState, character_id)
        window = _window(character_id)
        if state.paused_at_length is not None and len(window) < state.paused_at_length:
            # The context shrank (compression, an edit): truncation is worth another try.
            state.paused_at_length = None
            state.truncation_strikes = 0
            state.save(update_fields=["paused_at_length", "truncation_strikes"])
        reason = review_gate(character=character, window=window, state=state, now=now)
        if reason:
            logger.debug("recent review character=%s not started: %s", character_id, reason)
            return None
        state.last_started_at = now
        state.save(update_fields=["last_started_at"])
        job, _ = recent_job_request(character_id=character_id, kind=REVIEW_JOB)
    logger.info("recent review character=%s spawned job=%s window=%d", character_id, job.pk, len(window))
    return job


def review_cancel(*, name: str) -> bool:
    """Cancel the character's active review (the browser calls this after a manual edit)."""
    character = Character.objects.filter(name=name).first()
    if character is None:
        return False
    return recent_job_cancel(character_id=character.pk, kind=REVIEW_JOB)


# --- the LLM call --------------------------------------------------------------------------------------


def corrected_from_reply(value: dict[str, Any]) -> list[tuple[str, str]]:
    """``corrected_dialogue`` as (type, text) pairs; anything else is a bad reply, never an empty fix."""
    items = value["corrected_dialogue"]
    if not isinstance(items, list) or not items:
        raise ValueError("corrected_dialogue must be a non-empty list")
    corrected = []
    for item in items:
        role = _ROLES.get(str(item["role"]).lower())
        content = item["content"]
        if role is None or not isinstance(content, str) or not content.strip():
            raise ValueError("each corrected message needs a known role and non-empty content")
        corrected.append((role, content))
    return corrected


def _review_dialogue(snapshot: list[Turn]) -> str:
    return json.dumps([{"role": t.type, "content": t.text} for t in snapshot], ensure_ascii=False, indent=1)


def review_ask(*, character: Character, snapshot: list[Turn]) -> list[Turn]:
    language = character_language(character)
    messages = prompts.review_messages(
        language=language,
        name=character.name,
        master=master_display_name(character.master_name, language),
        dialogue=_review_dialogue(snapshot),
    )
    # thinking=None leaves the model's native default, as the original does for reviews.
    corrected = chat_json(
        tier=REVIEW_TIER, messages=messages, expect=dict, thinking=None, validate=corrected_from_reply
    )
    return accept_roles(snapshot=snapshot, corrected=[Turn(None, None, t, c) for t, c in corrected])


def accept_roles(*, snapshot: list[Turn], corrected: list[Turn]) -> list[Turn]:
    """A ``system`` message from the LLM is accepted only if the snapshot starts with the memo."""
    starts_with_memo = bool(snapshot) and snapshot[0].type == RecentMessage.Kind.SYSTEM
    return [t for t in corrected if t.type != RecentMessage.Kind.SYSTEM or starts_with_memo]


# --- the splice ----------------------------------------------------------------------------------------


def locate(snapshot: list[Turn], current: list[Turn]) -> tuple[int, int] | None:
    """(index in ``current`` of the snapshot's last message, how many slots before it still match)."""
    tail = [t.fingerprint for t in snapshot[-FINGERPRINT_SIZE:]]
    size = len(tail)
    for end in range(len(current) - 1, size - 2, -1):
        if [t.fingerprint for t in current[end - size + 1 : end + 1]] != tail:
            continue
        matched = 0
        while (
            matched < len(snapshot)
            and end - matched >= 0
            and snapshot[-1 - matched].fingerprint == current[end - matched].fingerprint
        ):
            matched += 1
        return end, matched
    return None


def plan_replacements(
    snapshot: list[Turn], current: list[Turn], corrected: list[Turn]
) -> list[tuple[Turn, Turn]] | str:
    """(current slot, corrected message) pairs to write, or why the result is discarded."""
    found = locate(snapshot, current)
    if found is None:
        return "white"
    end, matched = found
    count = min(matched, len(corrected))
    pairs = list(zip(current[end - count + 1 : end + 1], corrected[len(corrected) - count :], strict=True))
    # A correction never changes who spoke, and only the memo slot may hold a system message.
    if any(slot.type != fix.type for slot, fix in pairs):
        return "misaligned"
    return [(slot, fix) for slot, fix in pairs if slot.text != fix.text]


def review_splice(*, job: Job, snapshot: list[Turn], corrected: list[Turn]) -> str:
    """Write the corrections under the lock; returns the outcome."""
    character_id = job.character_id
    with settle_lock(character_id), transaction.atomic():
        lock_character(character_id)
        if not job_is_current(job=job):
            return "cancelled"
        rows = _window(character_id)
        plan = plan_replacements(snapshot, _turns(rows), corrected)
        if isinstance(plan, str):
            outcome = plan
        else:
            by_id = {row.pk: row for row in rows}
            before = memo_text(character_id)
            for slot, fix in plan:
                row = by_id[slot.row_id]  # type: ignore[index]
                row.data = {**row.data, "content": fix.text}
                row.save(update_fields=["data"])
            with change_cause("review"):
                memo_changed(character_id=character_id, before=before)
            outcome = f"spliced:{len(plan)}"
        _review_finished(character_id=character_id, snapshot=snapshot, rows=rows)
        # Finished in the same transaction, so a cancel either lands before the check above or after.
        job_succeed(job=job, outcome=outcome)
        return outcome


def _review_finished(*, character_id: int, snapshot: list[Turn], rows: list[RecentMessage]) -> None:
    cutoff = snapshot[-1].position
    RecentReviewState.objects.filter(character_id=character_id).update(
        cutoff_position=cutoff, truncation_strikes=0, paused_at_length=None
    )
    # Clean only if no human message arrived while the LLM was thinking.
    if not any(
        r.type == RecentMessage.Kind.HUMAN and cutoff is not None and r.position > cutoff for r in rows
    ):
        RecentWindowState.objects.filter(pk=character_id).update(review_clean=True)


def _strike(*, character_id: int, window_length: int) -> int:
    """Count one truncated review; returns the count. The row stays locked from the read to the
    write, so two reviews truncated at once count two, and a missing row is made under the character
    lock (``character_row_ensure``): ``review_maybe_spawn`` may be making it under that lock now."""
    with transaction.atomic():
        state = character_row_ensure(RecentReviewState, character_id)
        state.truncation_strikes += 1
        if state.truncation_strikes >= REVIEW_MAX_STRIKES:
            state.paused_at_length = window_length
        state.save(update_fields=["truncation_strikes", "paused_at_length"])
    return state.truncation_strikes


def review_job_handle(job: Job) -> str:
    """One run of a review job (the kernel counts failures and parks it without a provider)."""
    if not switch_enabled(RECENT_AUTO_REVIEW):
        return "switched_off"
    character = Character.objects.get(pk=job.character_id)
    snapshot = _turns(_window(job.character_id))
    if len(snapshot) < REVIEW_MIN_LENGTH:
        return "too_short"
    try:
        corrected = review_ask(character=character, snapshot=snapshot)
    except LLMTruncated as exc:
        strikes = _strike(character_id=job.character_id, window_length=len(snapshot))
        raise JobGiveUp(outcome=f"truncated {strikes}/{REVIEW_MAX_STRIKES}", error=exc) from exc
    except Exception as exc:
        if not isinstance(exc, LLMError | LLMUnavailable):
            logger.exception("recent review job %s crashed", job.pk)
        raise
    outcome = review_splice(job=job, snapshot=snapshot, corrected=corrected)
    logger.info(
        "recent review character=%s job=%s outcome=%s snapshot=%d corrected=%d",
        job.character_id,
        job.pk,
        outcome,
        len(snapshot),
        len(corrected),
    )
    return outcome
