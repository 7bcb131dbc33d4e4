"""Stage 1 fact extraction (reference §3.3.1–3.3.2): path A, path B and the per-turn fallback.

The scheduled tick reads the raw log (never the recent window) and keeps its cursors in
``ExtractionCursor``; a cursor moves only after the facts of its window are stored, except when one
window has failed five times (liveness: it is then pushed forward and the window is given up).
Each path's window is a job of the kernel's mechanism (``facts.extraction``, key ``a`` or ``b``), run
by this tick: it counts the window's attempts, backs off between them, dead-letters the fifth failure
and waits, attempts untouched, while no provider is configured.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import F
from django.utils import timezone

from facts.models import ExtractionCursor, Fact
from facts.prompts import disclosure_messages, extraction_messages
from facts.selectors import facts_known_since
from facts.services.archive import facts_archive_sweep
from facts.services.cursors import extraction_cursor_ensure
from facts.services.dedup import PersistReport, facts_persist
from facts.services.records import FactDraft, draft_from_llm
from nekomem.characters.language import character_language
from nekomem.characters.models import Character
from nekomem.journal.causes import caused_by
from nekomem.journal.jobs import JobWait, job_cancel, job_fail, job_start, job_succeed, job_wait_for_provider
from nekomem.journal.models import Job
from nekomem.journal.work import no_provider_reason
from nekomem.language.messages import message_text
from nekomem.language.resolution import language_of
from nekomem.llm import LLMBadOutput, LLMError, LLMUnavailable, chat_json
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_enabled
from recent.models import RawMessage
from recent.selectors import raw_log_between, raw_log_last_timestamp

logger = logging.getLogger(__name__)

TURN_THRESHOLD = 10
IDLE_CHECK_AFTER = timedelta(minutes=5)
COLD_START_IDLE = timedelta(seconds=10)
COLD_START_LOOKBACK = timedelta(minutes=10)
B_EVERY_NTH_A = 3
B_COLD_LOOKBACK = timedelta(minutes=5) * max(3, 10)  # the original's max(3, 10) × 5 min
B_MAX_ROWS = 200
B_KNOWN_FACTS = 30
A_MAX_ROWS = 400  # bounds one prompt; the rest of a long backlog is the next tick's window
EXTRACT_TIMEOUT = 60
EXTRACTION_JOB = "facts.extraction"
PATH_A, PATH_B = "a", "b"
NO_NEW_TURNS = "no new user turns"


class FactExtractionFailed(Exception):
    """Stage 1 failed terminally for this window; the cursor stays where it was."""


@dataclass(frozen=True)
class TickResult:
    ran_a: bool = False
    ran_b: bool = False
    created: int = 0
    reason: str = ""


@dataclass(frozen=True)
class _Line:
    role: str
    text: str
    timestamp: datetime


def _lines(rows: list[RawMessage]) -> list[_Line]:
    lines = []
    for row in rows:
        try:
            message = json.loads(row.message)
        except ValueError:
            continue  # one corrupt raw row must not block the character's extraction forever
        kind = message.get("type") if isinstance(message, dict) else None
        data = message.get("data") if isinstance(message, dict) else None
        text = message_text(data.get("content") if isinstance(data, dict) else None)
        if kind in ("human", "ai") and text.strip():
            lines.append(_Line(kind, text, row.timestamp))
    return lines


def stage1_extract(
    *,
    character: Character,
    lines: list[tuple[str, str]],
    source: str,
    known: list[str] | None = None,
    language: str | None = None,
) -> list[FactDraft]:
    """One Stage-1 LLM call. Raises LLMUnavailable (no provider) or FactExtractionFailed."""
    master = character.master_name  # the prompt fills in the locale's word when it is empty
    lang = language_of(
        [t for role, t in lines if role == "user"], character_language(character, request_language=language)
    )
    if source == Fact.Source.AI_DISCLOSURE:
        prompt = disclosure_messages(
            name=character.name, master=master, lines=lines, known=known or [], language=lang
        )
    else:
        prompt = extraction_messages(name=character.name, master=master, lines=lines, language=lang)
    try:
        reply = chat_json(
            tier="summary", messages=prompt, expect=list, thinking=False, timeout=EXTRACT_TIMEOUT
        )
    except LLMBadOutput:
        # A non-array reply counts as "nothing to remember" in the original; a dict or no JSON at
        # all is the same thing to us. Transport failures stay failures so the cursor holds.
        return []
    except LLMError as exc:
        raise FactExtractionFailed(str(exc)) from exc
    drafts = (draft_from_llm(item, source=source) for item in reply)
    return [d for d in drafts if d is not None]


# --- the scheduled tick ------------------------------------------------------------------------------


@caused_by("extraction")
def facts_extraction_tick(*, character_id: int, now: datetime | None = None) -> TickResult:
    """One signal-extraction poll for a character (every minute from the schedule)."""
    now = now or timezone.now()
    cursor = extraction_cursor_ensure(character_id=character_id)
    character = Character.objects.get(pk=character_id)
    if not switch_enabled(POWERFUL_MEMORY):
        _cursors_skip_to_now(cursor=cursor, now=now)
        return TickResult(reason="powerful memory off: per-turn extraction")
    rows, reason = _path_a_window(cursor=cursor, character=character, now=now)
    if not rows:
        if reason == NO_NEW_TURNS:
            # A failed cold-start window can slide out of the lookback: its attempts are moot now.
            job_cancel(character_id=character_id, kind=EXTRACTION_JOB, key=PATH_A)
        return TickResult(reason=reason)
    result = _run_path_a(cursor=cursor, character=character, rows=rows, now=now)
    if result.ran_a and cursor.a_success_count % B_EVERY_NTH_A == 0:
        b_created = _run_path_b(cursor=cursor, character=character, now=now)
        return TickResult(ran_a=True, ran_b=True, created=result.created + b_created)
    return result


def _cursors_skip_to_now(*, cursor: ExtractionCursor, now: datetime) -> None:
    """OFF mode: per-turn extraction covers the turns, so the batched windows must not replay them."""
    last = raw_log_last_timestamp(character_id=cursor.character_id)
    ExtractionCursor.objects.filter(pk=cursor.pk).update(
        last_check_at=now, last_a_message_at=last, last_b_check_at=last
    )


def _user_turns(rows: list[RawMessage]) -> int:
    """Calls (sessions) with at least one user message: the original's turn counter."""
    return len({row.session_id for row in rows if any(line.role == "human" for line in _lines([row]))})


def _path_a_window(
    *, cursor: ExtractionCursor, character: Character, now: datetime
) -> tuple[list[RawMessage], str]:
    cold = cursor.last_a_message_at is None
    start: datetime = cursor.last_a_message_at or now - COLD_START_LOOKBACK
    rows = [
        r
        for r in raw_log_between(character_id=character.pk, start=start, end=now)
        if cold or r.timestamp > start
    ]
    turns = _user_turns(rows)
    if turns == 0:
        return [], NO_NEW_TURNS
    if cursor.last_check_at is None:
        idle_since = character.last_activity_at
        if idle_since is not None and now - idle_since < COLD_START_IDLE:
            return [], "cold start: waiting for 10 s of quiet"
    elif turns < TURN_THRESHOLD and now - cursor.last_check_at < IDLE_CHECK_AFTER:
        return [], f"{turns} turn(s) since the last check; waiting for {TURN_THRESHOLD} or 5 minutes"
    return _bounded(rows, A_MAX_ROWS), ""


def _bounded(rows: list[RawMessage], limit: int) -> list[RawMessage]:
    """At most ``limit`` rows, never splitting one timestamp (a cursor on it would skip the rest)."""
    if len(rows) <= limit:
        return rows
    cut = rows[:limit]
    last = cut[-1].timestamp
    whole = [r for r in cut if r.timestamp < last]
    return whole or [r for r in rows if r.timestamp == last]


def _run_path_a(
    *, cursor: ExtractionCursor, character: Character, rows: list[RawMessage], now: datetime
) -> TickResult:
    job, why = job_start(character_id=character.pk, kind=EXTRACTION_JOB, key=PATH_A, now=now)
    if job is None:
        return TickResult(reason=f"waiting: {why}")
    window_end = rows[-1].timestamp
    lines = [("user", line.text) for line in _lines(rows) if line.role == "human"]
    try:
        drafts = stage1_extract(character=character, lines=lines, source=Fact.Source.USER_OBSERVATION)
        report = (
            facts_persist(character_id=character.pk, drafts=drafts, now=now) if drafts else PersistReport()
        )
    except LLMUnavailable:
        return _wait(job=job)
    except Exception as exc:
        if job_fail(job=job, error=exc, now=now) == Job.Status.DEAD:
            # Dead-letter the window: the loop must stay live for the turns that come after it.
            ExtractionCursor.objects.filter(pk=cursor.pk).update(
                last_a_message_at=window_end, last_check_at=now
            )
            logger.warning("path A window dead-lettered character=%s", cursor.character_id)
        return TickResult(reason=f"path A failed: {type(exc).__name__}")
    ExtractionCursor.objects.filter(pk=cursor.pk).update(
        last_check_at=now, last_a_message_at=window_end, a_success_count=F("a_success_count") + 1
    )
    job_succeed(job=job, outcome=f"created:{len(report.created)}")
    cursor.refresh_from_db()
    facts_archive_sweep(character_id=character.pk, now=now)
    return TickResult(ran_a=True, created=len(report.created))


def _wait(*, job: Job) -> TickResult:
    """No provider: nothing is attempted, so nothing is counted; the job shows the reason."""
    job_wait_for_provider(job=job, tier="summary")
    logger.info("fact extraction waiting character=%s reason=no provider", job.character_id)
    return TickResult(reason=f"waiting: {no_provider_reason('summary')}")


def _path_b_window(
    *, cursor: ExtractionCursor, character: Character
) -> tuple[list[RawMessage], datetime | None]:
    end = cursor.last_a_message_at
    if end is None:
        return [], None
    start = cursor.last_b_check_at or end - B_COLD_LOOKBACK
    rows = [
        r
        for r in raw_log_between(character_id=character.pk, start=start, end=end)
        if cursor.last_b_check_at is None or r.timestamp > start
    ][:B_MAX_ROWS]
    return rows, start


def _trim_to_user_span(lines: list[_Line]) -> list[_Line]:
    """From the first user line to the end of the last call that has one.

    AI lines before any user line have no user context. The reply of the last user turn is kept
    (its rows share the turn's timestamp): cutting at the user line itself, as a literal reading of
    the original would, drops every window's final disclosure for good.
    """
    user_at = [i for i, line in enumerate(lines) if line.role == "human"]
    if not user_at:
        return []
    last_turn = lines[user_at[-1]].timestamp
    end = max(i for i, line in enumerate(lines) if line.timestamp == last_turn)
    return lines[user_at[0] : end + 1]


def _run_path_b(*, cursor: ExtractionCursor, character: Character, now: datetime) -> int:
    rows, start = _path_b_window(cursor=cursor, character=character)
    end = cursor.last_a_message_at
    lines = _trim_to_user_span(_lines(rows))
    if not lines or start is None:
        ExtractionCursor.objects.filter(pk=cursor.pk).update(last_b_check_at=end)
        return 0
    job, _why = job_start(character_id=character.pk, kind=EXTRACTION_JOB, key=PATH_B, now=now)
    if job is None:
        return 0
    known = facts_known_since(character_id=character.pk, since=start, limit=B_KNOWN_FACTS)
    rendered = [("user" if line.role == "human" else "assistant", line.text) for line in lines]
    try:
        drafts = stage1_extract(
            character=character, lines=rendered, source=Fact.Source.AI_DISCLOSURE, known=known
        )
        report = (
            facts_persist(character_id=character.pk, drafts=drafts, now=now) if drafts else PersistReport()
        )
    except LLMUnavailable:
        _wait(job=job)
        return 0
    except Exception as exc:
        if job_fail(job=job, error=exc, now=now) == Job.Status.DEAD:
            ExtractionCursor.objects.filter(pk=cursor.pk).update(last_b_check_at=end)
        return 0
    ExtractionCursor.objects.filter(pk=cursor.pk).update(last_b_check_at=end)
    job_succeed(job=job, outcome=f"created:{len(report.created)}")
    return len(report.created)


# --- per-turn mode (powerful memory OFF) -----------------------------------------------------------------


@caused_by("extraction")
def facts_extract_turn(*, character_id: int, payload: dict[str, Any]) -> int:
    """The post-turn op's Stage-1 step when powerful memory is OFF; returns the facts created.

    Raises on an LLM or persist failure so the outbox counts an attempt and retries the op (or,
    with no provider, JobWait so it waits without counting one); exact
    and identical-text dedup make a retry after a partial success harmless.
    """
    if switch_enabled(POWERFUL_MEMORY):
        return 0  # the batched loop reads these turns from the raw log
    messages = payload.get("messages") or []
    lines = [
        ("user", text)
        for m in messages
        if isinstance(m, dict) and m.get("type") == "human"
        for text in [message_text((m.get("data") or {}).get("content"))]
        if text.strip()
    ]
    if not lines:
        return 0
    character = Character.objects.get(pk=character_id)
    try:
        drafts = stage1_extract(
            character=character,
            lines=lines,
            source=Fact.Source.USER_OBSERVATION,
            language=payload.get("language"),
        )
    except LLMUnavailable as exc:
        # Not an attempt: the op waits (reason shown) and runs once a provider exists.
        raise JobWait(no_provider_reason("summary")) from exc
    report = facts_persist(character_id=character_id, drafts=drafts)
    facts_archive_sweep(character_id=character_id)
    return len(report.created)


# --- coverage carried by an import ---------------------------------------------------------------------


def extraction_coverage_set(*, character_id: int, covered_until: datetime | None) -> bool:
    """Path A has read the raw log up to ``covered_until`` (``cursors.json``'s ``extracted_until``).

    Returns whether the cursor changed. Turns after it are read by the next window (and stay in
    recall's raw-turn pool until then); the turns before it leave that pool.
    """
    cursor = extraction_cursor_ensure(character_id=character_id)
    if cursor.last_a_message_at == covered_until:
        return False
    ExtractionCursor.objects.filter(pk=cursor.pk).update(last_a_message_at=covered_until)
    return True


def extraction_coverage_infer(*, character_id: int) -> datetime | None:
    """After facts were imported into a character whose extraction has read nothing: the original
    extracted them from its raw log as the turns came (its cursors live in memory only, so its files
    never say how far), so the log up to the newest fact counts as read.

    Without this, every imported turn would stay in recall's raw-turn pool beside the facts made of it
    (each answer twice, and the whole log embedded again), and a configured provider would extract the
    whole history a second time. A cursor that has moved is never touched. Returns the new cursor.
    """
    cursor = extraction_cursor_ensure(character_id=character_id)
    if cursor.last_a_message_at is not None:
        return None
    facts = Fact.objects.filter(character_id=character_id).order_by("-created_at")
    newest = facts.values_list("created_at", flat=True).first()
    if newest is None:
        return None
    ExtractionCursor.objects.filter(pk=cursor.pk).update(last_a_message_at=newest)
    return newest
