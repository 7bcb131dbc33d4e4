"""Recent-window compression (reference §3.1.1–3.1.4).

Above 20 ordinary messages the head (everything but the last 9, the old memo included) is summarised
into one leading ``system`` memo. The LLM runs outside any database transaction; the splice re-reads
the window under the settle lock and replaces the head only if the snapshot is still, exactly, the
head — otherwise the summary is discarded ("moot"). A failure leaves the window as it was.

The 60,000-token hard cap (§3.1.4) keeps the prompt bounded while summarising keeps failing: with a
provider, once the job dead-letters (a retry may still succeed until then); without one, summarising
cannot run at all, so the cap applies for as long as the job waits for a provider. The raw log keeps
every message either way.
"""

from __future__ import annotations

import logging
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from nekomem.characters.language import character_language
from nekomem.characters.locks import lock_character, settle_lock
from nekomem.characters.models import Character
from nekomem.journal.causes import change_cause
from nekomem.journal.jobs import job_run
from nekomem.journal.models import Job, WorkStatus
from nekomem.journal.work import no_provider_reason
from nekomem.language.counting import count_tokens, truncate_head_tail, truncate_tokens
from nekomem.language.resolution import master_display_name
from nekomem.llm import LLMBadOutput, LLMError, LLMUnavailable, chat_json, provider_status
from recent import prompts
from recent.jobs import COMPRESS_JOB, recent_job_request
from recent.messages import content_text
from recent.models import RecentMessage, RecentMeta
from recent.services.history import memo_changed, memo_text

logger = logging.getLogger(__name__)

COMPRESS_THRESHOLD_ITEMS = 20
HISTORY_MAX_ITEMS = 10
KEEP_VERBATIM = HISTORY_MAX_ITEMS - 1
PER_MESSAGE_HEAD_TOKENS = 250
PER_MESSAGE_TAIL_TOKENS = 250
INPUT_BUDGET_TOKENS = 8000
SUMMARY_MAX_TOKENS = 1000
HARD_CAP_TOKENS = 60000
REDUCE_MAX_DEPTH = 3
STALE_AFTER = timedelta(hours=1)
STAGE1_ATTEMPTS = 3  # re-asks on a reply without a usable summary; network retries live in the client
SUMMARY_TIER = "summary"


@dataclass(frozen=True)
class Slot:
    """What the splice compares: a row's identity and its full content."""

    id: int
    position: int
    type: str
    data: dict[str, Any]

    @classmethod
    def of(cls, row: RecentMessage) -> Slot:
        return cls(id=row.pk, position=row.position, type=row.type, data=row.data)


@dataclass
class CompressResult:
    outcome: str  # "not_needed" | "spliced" | "moot"
    head: int = 0
    calls: int = 0
    stale_hint: bool = False


@dataclass
class _Summariser:
    """One compression's LLM context: who is speaking, in which language, and how many calls so far."""

    name: str
    master: str
    language: str
    calls: int = 0
    chunk_inputs: list[str] = field(default_factory=list)

    def summarise(self, dialogue: str, *, stale_hint: bool = False) -> str:
        messages = prompts.summarise_messages(
            language=self.language,
            name=self.name,
            master=self.master,
            dialogue=dialogue,
            stale_hint=stale_hint,
        )
        return self._ask(messages)

    def further(self, summary: str) -> str:
        messages = prompts.further_summarise_messages(
            language=self.language, name=self.name, master=self.master, summary=summary
        )
        return self._ask(messages)

    def _ask(self, messages: list[dict[str, str]]) -> str:
        for attempt in range(1, STAGE1_ATTEMPTS + 1):
            self.calls += 1
            try:
                return str(
                    chat_json(
                        tier=SUMMARY_TIER,
                        messages=messages,
                        expect=dict,
                        thinking=False,
                        validate=summary_from_reply,
                    )
                )
            except LLMBadOutput:
                if attempt == STAGE1_ATTEMPTS:
                    raise
        raise AssertionError("unreachable")


def summary_from_reply(value: dict[str, Any]) -> str:
    """The summary text; an empty or missing one is a failure, never an empty memo."""
    summary = value.get("summary", value.get("对话摘要"))
    if not isinstance(summary, str) or not summary.strip():
        raise ValueError("reply has no non-empty summary")
    return summary.strip()


def needs_compression(window: list[RecentMessage]) -> bool:
    # Every message counts, the memo included: memo + 9 kept messages is the steady state of 10.
    return len(window) > COMPRESS_THRESHOLD_ITEMS


def render_line(message: RecentMessage | Slot, *, name: str, master: str) -> str:
    text = truncate_head_tail(
        content_text(message.data.get("content")), PER_MESSAGE_HEAD_TOKENS, PER_MESSAGE_TAIL_TOKENS
    )
    if message.type == RecentMessage.Kind.SYSTEM:
        return text  # the memo carries its own localised prefix
    speaker = master if message.type == RecentMessage.Kind.HUMAN else name
    return f"{speaker} | {text}"


def chunk_lines(lines: list[str], budget: int) -> list[list[str]]:
    """Greedy chunks of whole lines within ``budget`` tokens; a line is never split."""
    chunks: list[list[str]] = []
    current: list[str] = []
    used = 0
    for line in lines:
        cost = count_tokens(line) + 1  # + the joining newline
        if current and used + cost > budget:
            chunks.append(current)
            current, used = [], 0
        current.append(line)
        used += cost
    if current:
        chunks.append(current)
    return chunks


def reduce_to_budget(lines: list[str], summariser: _Summariser, budget: int = INPUT_BUDGET_TOKENS) -> str:
    """Map-reduce an over-budget dialogue into partial summaries that fit one final call."""
    text = "\n".join(lines)
    if count_tokens(text) <= budget:
        return text
    partials = [_summarise_chunk(chunk, summariser) for chunk in chunk_lines(lines, budget)]
    depth = 0
    while count_tokens("\n".join(partials)) > budget and depth < REDUCE_MAX_DEPTH:
        partials = [_summarise_chunk(batch, summariser) for batch in chunk_lines(partials, budget)]
        depth += 1
    return truncate_tokens("\n".join(partials), budget)


def _summarise_chunk(chunk: list[str], summariser: _Summariser) -> str:
    dialogue = "\n".join(chunk)
    summariser.chunk_inputs.append(dialogue)
    return summariser.summarise(dialogue)


def summarise_head(head: list[Slot], summariser: _Summariser, *, stale_hint: bool) -> str:
    lines = [render_line(slot, name=summariser.name, master=summariser.master) for slot in head]
    dialogue = reduce_to_budget(lines, summariser)
    summary = summariser.summarise(dialogue, stale_hint=stale_hint)
    if count_tokens(summary) > SUMMARY_MAX_TOKENS:
        summary = summariser.further(summary)
    return summary


def memo_data(text: str) -> dict[str, Any]:
    """A LangChain ``SystemMessage`` in ``messages_to_dict`` form."""
    return {
        "content": text,
        "additional_kwargs": {},
        "response_metadata": {},
        "type": "system",
        "name": None,
        "id": None,
    }


def _anchor(character_id: int) -> Any:
    return (
        RecentMeta.objects.filter(character_id=character_id)
        .values_list("last_past_block_update_at", flat=True)
        .first()
    )


def window_compress(*, character_id: int, lock_held: bool = False) -> CompressResult:
    """Compress the window if it is over the threshold. Raises LLMUnavailable / LLMError on failure.

    ``lock_held``: the caller already holds the settle lock (``/renew``), so the splice must not take
    it again (a second flock on the same file from one process would wait for itself).
    """
    character = Character.objects.get(pk=character_id)
    window = list(RecentMessage.objects.filter(character_id=character_id).order_by("position"))
    if not needs_compression(window):
        return CompressResult(outcome="not_needed")
    head = [Slot.of(row) for row in window[:-KEEP_VERBATIM]]
    language = character_language(character)
    summariser = _Summariser(
        name=character.name, master=master_display_name(character.master_name, language), language=language
    )
    anchor = _anchor(character_id)
    stale = anchor is not None and timezone.now() - anchor > STALE_AFTER
    started = time.monotonic()
    summary = summarise_head(head, summariser, stale_hint=stale)
    memo = prompts.MEMO_PREFIX[language] + summary
    spliced = splice_memo(
        character_id=character_id,
        head=head,
        memo=memo,
        move_anchor=stale or anchor is None,
        lock_held=lock_held,
    )
    result = CompressResult(
        outcome="spliced" if spliced else "moot", head=len(head), calls=summariser.calls, stale_hint=stale
    )
    logger.info(
        "recent compress character=%s outcome=%s head=%d window=%d calls=%d stale_hint=%s elapsed_ms=%d",
        character_id,
        result.outcome,
        len(head),
        len(window),
        summariser.calls,
        stale,
        (time.monotonic() - started) * 1000,
    )
    logger.debug("recent compress character=%s memo=%r", character_id, memo)
    return result


def splice_memo(
    *, character_id: int, head: list[Slot], memo: str, move_anchor: bool, lock_held: bool
) -> bool:
    """Replace the head with one memo, only if the head is still exactly what was summarised."""
    lock: AbstractContextManager[None] = nullcontext() if lock_held else settle_lock(character_id)
    with lock, transaction.atomic():
        lock_character(character_id)
        current = list(RecentMessage.objects.filter(character_id=character_id).order_by("position"))
        # The window must still start with the head and still hold more than it: the kept tail (the
        # latest turn) is never part of a splice.
        if len(current) <= len(head) or [Slot.of(row) for row in current[: len(head)]] != head:
            return False
        before = memo_text(character_id)
        RecentMessage.objects.filter(pk__in=[slot.id for slot in head]).delete()
        RecentMessage.objects.create(
            character_id=character_id, position=head[-1].position, type="system", data=memo_data(memo)
        )
        with change_cause("compression"):
            memo_changed(character_id=character_id, before=before)
        if move_anchor:
            RecentMeta.objects.update_or_create(
                character_id=character_id, defaults={"last_past_block_update_at": timezone.now()}
            )
    return True


def window_hard_cap(*, character_id: int) -> int:
    """Drop the oldest non-memo messages while the raw content is over 60,000 tokens, keeping the memo
    and the last 10. Returns how many were dropped.

    The last resort of §3.1.4: after compression dead-lettered, and while it waits for a provider.
    A window under the cap is seen by one read, without taking the settle lock."""
    if not _over_hard_cap(
        RecentMessage.objects.filter(character_id=character_id).values_list("data", flat=True)
    ):
        return 0
    with settle_lock(character_id), transaction.atomic():
        lock_character(character_id)
        window = list(RecentMessage.objects.filter(character_id=character_id).order_by("position"))
        sizes = [_raw_tokens(row.data) for row in window]
        total = sum(sizes)
        start = 1 if window and window[0].type == RecentMessage.Kind.SYSTEM else 0
        droppable = range(start, max(start, len(window) - HISTORY_MAX_ITEMS))
        dropped: list[int] = []
        for index in droppable:
            if total <= HARD_CAP_TOKENS:
                break
            dropped.append(window[index].pk)
            total -= sizes[index]
        RecentMessage.objects.filter(pk__in=dropped).delete()
    if dropped:
        logger.warning(
            "recent hard cap character=%s dropped=%d tokens_left=%d", character_id, len(dropped), total
        )
    return len(dropped)


def _raw_tokens(data: dict[str, Any]) -> int:
    return count_tokens(content_text(data.get("content")))


def _over_hard_cap(datas: Any) -> bool:
    total = 0
    for data in datas:
        total += _raw_tokens(data)
        if total > HARD_CAP_TOKENS:
            return True
    return False


def compress_inline(*, character_id: int) -> str | None:
    """Compress inside a request that already holds the settle lock (``/renew``).

    Returns None when the window is compressed (or needed nothing), else why it is not: the kernel's
    ``no_provider:summary``, ``failed:<error type>``, or ``moot`` (the window changed meanwhile).
    """
    try:
        result = window_compress(character_id=character_id, lock_held=True)
    except LLMUnavailable as exc:
        logger.info("recent compress character=%s skipped: %s", character_id, exc.reason)
        return no_provider_reason(SUMMARY_TIER)
    except Exception as exc:  # the route must answer; the background job retries
        logger.warning("recent compress character=%s failed inline (%s)", character_id, type(exc).__name__)
        return f"failed:{type(exc).__name__}"
    return "moot" if result.outcome == "moot" else None


def compress_request(*, character_id: int, run_here: bool = False) -> Job | None:
    """Ask for a compression when the window is over the threshold.

    A new job is enqueued, or with ``run_here`` (idle maintenance, already in a worker) run at once.
    A job already waiting for a provider that is still missing cannot summarise this window either,
    so the hard cap holds it meanwhile: it is what keeps ``/new_dialog`` bounded without a provider.
    """
    count = RecentMessage.objects.filter(character_id=character_id).count()
    if count <= COMPRESS_THRESHOLD_ITEMS:
        return None
    job, created = recent_job_request(character_id=character_id, kind=COMPRESS_JOB, enqueue=not run_here)
    if created and run_here:
        job_run(job_id=job.pk)
    elif not created and _waits_for_provider(job):
        window_hard_cap(character_id=character_id)
    return job


def _waits_for_provider(job: Job) -> bool:
    """The job is parked until a summary provider is configured, and none is yet (once one is, the
    sweep runs the job and the summariser folds the window into a memo: nothing to cap)."""
    return (
        job.status == WorkStatus.WAITING
        and job.waiting_reason == no_provider_reason(SUMMARY_TIER)
        and provider_status(SUMMARY_TIER) is not None
    )


def compress_job_handle(job: Job) -> str:
    """One run of a compression job (the kernel counts failures and parks it without a provider)."""
    try:
        return window_compress(character_id=job.character_id).outcome
    except LLMUnavailable:
        # The kernel parks the job until a provider is configured; until then nothing can summarise,
        # so the window is held to the hard cap instead of growing with every turn.
        window_hard_cap(character_id=job.character_id)
        raise
    except Exception as exc:
        if not isinstance(exc, LLMError):
            logger.exception("recent compress job %s crashed", job.pk)
        raise


def compress_job_dead(job: Job) -> None:
    """With a provider, the hard cap waits for the dead letter: a retry may still summarise."""
    window_hard_cap(character_id=job.character_id)
