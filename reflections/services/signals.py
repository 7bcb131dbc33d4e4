"""Evidence from the conversation (reference §3.3.3, §3.4): Stage 2, the keyword hook, the rebuttal loop.

All three run only while powerful memory is ON. While it is OFF their queues are moved past, so
switching it back on starts from now instead of a backlog.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.db import transaction
from django.utils import timezone

from facts.models import Fact
from facts.services import facts_mark_signal_processed
from nekomem.characters.language import character_language
from nekomem.characters.locks import character_row_ensure, lock_character
from nekomem.characters.models import Character
from nekomem.embeddings import Embedder, EmbeddingError, get_embedder
from nekomem.journal.causes import caused_by
from nekomem.journal.jobs import job_fail, job_succeed, job_wait_for_provider
from nekomem.journal.models import Job
from nekomem.journal.services import event_append
from nekomem.language.counting import count_tokens, truncate_tokens
from nekomem.language.messages import message_text
from nekomem.language.resolution import language_of
from nekomem.llm import LLMError, LLMUnavailable, chat_json
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_enabled
from recent.selectors import raw_log_between
from reflections.evidence import Signal
from reflections.keywords import has_negative_keyword
from reflections.models import Reflection, ReflectionCursor
from reflections.observations import Observation, observation_signal_apply, observation_sources
from reflections.prompts import keyword_messages, rebuttal_messages, rerank_messages, signal_messages
from reflections.reranking import LLMRanker, RerankRecord, chat_ranker, rerank
from reflections.services.lifecycle import (
    reflection_signal_apply,
    reflection_transition,
    reflections_auto_promote,
)
from reflections.services.records import score_of
from reflections.services.retries import REBUTTAL_JOB, STAGE2_JOB, keyed_job_start

logger = logging.getLogger(__name__)

STAGE2_FACT_CAP = 20
OBSERVATION_BUDGET = 30
OBSERVATION_TOKENS = 200
OBSERVATION_LIST_TOKENS = 15_000
STAGE2_TIMEOUT = 90
KEYWORD_TIMEOUT = 60
KEYWORD_LAST_USER_MESSAGES = 3
REBUTTAL_FIRST_LOOKBACK = timedelta(hours=1)
REBUTTAL_BATCH = 20
REBUTTAL_SQL_LIMIT = 200
REBUTTAL_TIMEOUT = 60
OBSERVATION_STATUSES = (Reflection.Status.CONFIRMED, Reflection.Status.PROMOTED)


@dataclass(frozen=True)
class Stage2Result:
    facts: int = 0
    applied: int = 0
    marked: bool = False
    reason: str = ""


# --- the observation pool (confirmed and promoted reflections) -------------------------------------------


def _prompt_id(reflection: Reflection) -> str:
    return f"reflection.{reflection.reflection_id}"


def reflection_observations(character_id: int, now: datetime, embedder: Embedder | None) -> list[Observation]:
    """This layer's part of the observation pool: confirmed and promoted reflections."""
    observations = []
    for reflection in Reflection.objects.filter(
        character_id=character_id, status__in=OBSERVATION_STATUSES
    ).order_by("pk"):
        observations.append(
            Observation(
                prompt_id=_prompt_id(reflection),
                text=reflection.text,
                evidence_score=score_of(reflection, now=now),
                vector=reflection.cached_vector(embedder),
                suppressed=reflection.suppress,
            )
        )
    return observations


def reflection_observation_signal(
    character_id: int, prompt_id: str, signal: Signal, source: str, now: datetime
) -> bool:
    reflection = Reflection.objects.filter(
        character_id=character_id,
        reflection_id=prompt_id.removeprefix("reflection."),
        status__in=OBSERVATION_STATUSES,
    ).first()
    if reflection is None:
        return False
    reflection_signal_apply(reflection=reflection, signal=signal, source=source, now=now)
    return True


def observation_pool(
    *, character_id: int, queries: list[str], now: datetime, llm: LLMRanker | None = None
) -> list[Observation]:
    """Every registered layer's observations (reflections, persona entries), narrowed to 30 by the
    background reranker: the best cosine against any query first, then, with an ``llm`` ranker (Stage 2,
    reference §3.3.3 step 3 and §4.6), the summary tier's pick among the coarse 90. Without vectors
    (no model, or it failed) the pool is in evidence order and no LLM is asked."""
    embedder = get_embedder(wait=False)
    records = [
        RerankRecord(
            id=observation.prompt_id,
            text=observation.text,
            evidence_score=observation.evidence_score,
            vector=observation.vector,
            suppressed=observation.suppressed,
            payload=observation,
        )
        for source in observation_sources()
        for observation in source.read(character_id, now, embedder)
    ]
    ranked = rerank(
        queries=queries,
        records=records,
        budget=OBSERVATION_BUDGET,
        on_no_vectors="evidence",
        llm=llm,
        embed=_query_embed(embedder),
    )
    return [r.payload for r in ranked]


def _query_embed(embedder: Embedder | None) -> Callable[[list[str]], np.ndarray | None]:
    """The queries embedded by the model the pool's vectors were read for (one model per call: a
    model loaded meanwhile must not rank vectors of another); None when there is none or it fails."""

    def embed(queries: list[str]) -> np.ndarray | None:
        if embedder is None:
            return None
        try:
            return embedder.embed(queries)
        except EmbeddingError:
            return None

    return embed


def _observation_ranker(character: Character, language: str | None) -> LLMRanker:
    """Stage 2's re-rank step (reference §3.3.3 step 3), worded in the language of its facts."""
    return chat_ranker(
        lambda queries, lines, budget: rerank_messages(
            name=character.name,
            master=character.master_name,
            queries=queries,
            memories=lines,
            budget=budget,
            language=language,
        )
    )


def observation_lines(observations: list[Observation]) -> list[str]:
    """Each cut to 200 tokens, the whole list to 15 000."""
    lines, spent = [], 0
    for observation in observations:
        line = (
            f'[{observation.prompt_id}] "{truncate_tokens(observation.text, OBSERVATION_TOKENS)}" '
            f"(evidence_score={observation.evidence_score:.2f})"
        )
        spent += count_tokens(line)
        if spent > OBSERVATION_LIST_TOKENS:
            break
        lines.append(line)
    return lines


def match_id(raw: Any, known: list[str]) -> str | None:
    """An id of ``known`` equal to ``raw``, or the one ``raw`` is a suffix of (the model often drops the
    ``reflection.`` prefix); None when there is none or more than one."""
    if not isinstance(raw, str) or not raw.strip():
        return None
    raw = raw.strip()
    if raw in known:
        return raw
    matches = [k for k in known if k.endswith(raw) and k[: len(k) - len(raw)].endswith((".", "_"))]
    return matches[0] if len(matches) == 1 else None


# --- Stage 2 --------------------------------------------------------------------------------------


def _unprocessed_user_facts(*, character_id: int) -> list[Fact]:
    return list(
        Fact.objects.filter(
            character_id=character_id, signal_processed=False, source=Fact.Source.USER_OBSERVATION
        ).order_by("-importance", "created_at", "pk")[:STAGE2_FACT_CAP]
    )


@caused_by("feedback")
def reflections_stage2(*, character_id: int, now: datetime | None = None) -> Stage2Result:
    """Map the newest user facts to reinforces/negates signals on the observation pool."""
    now = now or timezone.now()
    facts = _unprocessed_user_facts(character_id=character_id)
    if not facts:
        return Stage2Result(reason="no unprocessed facts")
    fact_ids = [f.fact_id for f in facts]
    if not switch_enabled(POWERFUL_MEMORY):
        facts_mark_signal_processed(character_id=character_id, fact_ids=fact_ids)
        return Stage2Result(facts=len(facts), marked=True, reason="powerful memory off: skipped")
    key = ",".join(sorted(fact_ids))[-64:]
    job, why = keyed_job_start(character_id=character_id, kind=STAGE2_JOB, key=key, now=now)
    if job is None:
        return Stage2Result(facts=len(facts), reason=why)
    try:
        character = Character.objects.get(pk=character_id)
        language = language_of([f.text for f in facts], character_language(character))
        pool = observation_pool(
            character_id=character_id,
            queries=[f.text for f in facts],
            now=now,
            llm=_observation_ranker(character, language),
        )
        lines = observation_lines(pool)
        shown = [observation.prompt_id for observation in pool[: len(lines)]]
        if not shown:
            facts_mark_signal_processed(character_id=character_id, fact_ids=fact_ids)
            job_succeed(job=job, outcome="no observations")
            return Stage2Result(facts=len(facts), marked=True, reason="no observations")
        messages = signal_messages(
            name=character.name,
            master=character.master_name,
            observations=lines,
            facts=[f"[{f.fact_id}] {f.text}" for f in facts],
            language=language,
        )
        reply = chat_json(
            tier="summary", messages=messages, expect=dict, thinking=True, timeout=STAGE2_TIMEOUT
        )
    except LLMUnavailable as exc:
        job_wait_for_provider(job=job, tier="summary")
        return Stage2Result(facts=len(facts), reason=f"waiting: {exc.reason}")
    except Exception as exc:  # LLM errors and anything else: one attempt of the kernel's five
        status = job_fail(job=job, error=exc, now=now)
        if not isinstance(exc, LLMError):
            raise
        outcome = "dead" if status == Job.Status.DEAD else "backoff"
        return Stage2Result(facts=len(facts), reason=f"failed: {outcome}")
    signals = _validated_signals(reply, fact_ids=fact_ids, shown=shown)
    applied, complete = stage2_signals_apply(character_id=character_id, signals=signals, now=now)
    if complete:
        facts_mark_signal_processed(character_id=character_id, fact_ids=fact_ids)
    # An incomplete apply (a reflection changed meanwhile) is no failure: the next tick reads again.
    job_succeed(job=job, outcome="applied" if complete else "partial")
    reflections_auto_promote(character_id=character_id, now=now)
    return Stage2Result(facts=len(facts), applied=applied, marked=complete, reason="ran")


def _validated_signals(
    reply: dict[str, Any], *, fact_ids: list[str], shown: list[str]
) -> list[tuple[str, Signal]]:
    valid: list[tuple[str, Signal]] = []
    for item in reply.get("signals") or []:
        if not isinstance(item, dict):
            continue
        source = match_id(item.get("source_fact_id"), fact_ids)
        target = match_id(item.get("target_id"), shown)
        kind = item.get("signal")
        if source is None or target is None or kind not in (Signal.REINFORCES, Signal.NEGATES):
            continue  # unknown fact, a target outside the prompt, or no usable signal: dropped
        valid.append((target, Signal(kind)))
    return valid


def stage2_signals_apply(
    *, character_id: int, signals: list[tuple[str, Signal]], now: datetime
) -> tuple[int, bool]:
    """(applied, every signal applied), by prompt id. A target that left the pool meanwhile counts as
    not applied."""
    applied = 0
    with transaction.atomic():
        lock_character(character_id)
        for prompt_id, signal in signals:
            applied += observation_signal_apply(
                character_id=character_id, prompt_id=prompt_id, signal=signal, source="user_fact", now=now
            )
    return applied, applied == len(signals)


# --- the negative-keyword hook (per turn) ------------------------------------------------------------------


def _user_texts(messages: list[Any]) -> list[str]:
    texts = []
    for m in messages:
        if isinstance(m, dict) and m.get("type") == "human":
            text = message_text((m.get("data") or {}).get("content"))
            if text.strip():
                texts.append(text)
    return texts


@caused_by("rebuttal")
def reflections_keyword_hook(
    *, character_id: int, payload: dict[str, Any], now: datetime | None = None
) -> int:
    """On a denial-sounding user message, ask the emotion tier which observations it denies."""
    if not switch_enabled(POWERFUL_MEMORY):
        return 0
    texts = _user_texts(payload.get("messages") or [])
    if not texts or not has_negative_keyword(texts):
        return 0
    now = now or timezone.now()
    recent = texts[-KEYWORD_LAST_USER_MESSAGES:]
    pool = observation_pool(character_id=character_id, queries=recent, now=now)
    lines = observation_lines(pool)
    shown = [observation.prompt_id for observation in pool[: len(lines)]]
    if not shown:
        return 0
    character = Character.objects.get(pk=character_id)
    try:
        reply = chat_json(
            tier="emotion",
            messages=keyword_messages(
                name=character.name,
                master=character.master_name,
                messages=recent,
                observations=lines,
                language=language_of(
                    recent, character_language(character, request_language=payload.get("language"))
                ),
            ),
            expect=dict,
            timeout=KEYWORD_TIMEOUT,
        )
    except (LLMUnavailable, LLMError) as exc:
        # A hint, not a duty: the rebuttal loop reads the same messages again later.
        logger.info("keyword hook skipped character=%s (%s)", character_id, type(exc).__name__)
        return 0
    targets = [match_id(t.get("target_id"), shown) for t in reply.get("targets") or [] if isinstance(t, dict)]
    applied = 0
    with transaction.atomic():
        lock_character(character_id)
        for target in dict.fromkeys(t for t in targets if t):
            applied += observation_signal_apply(
                character_id=character_id,
                prompt_id=target,
                signal=Signal.REBUTTAL,
                source="user_keyword_rebut",
                now=now,
            )
    return applied


# --- the rebuttal loop (every 180 s) --------------------------------------------------------------------


def _human_rows(rows: list[Any]) -> list[tuple[datetime, str]]:
    out = []
    for row in rows:
        try:
            message = json.loads(row.message)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("type") == "human":
            text = message_text((message.get("data") or {}).get("content"))
            if text.strip():
                out.append((row.timestamp, text))
    return out


def _batch(messages: list[tuple[datetime, str]]) -> list[tuple[datetime, str]]:
    """The first 20, extended by any further messages sharing the 20th's timestamp."""
    if len(messages) <= REBUTTAL_BATCH:
        return messages
    last = messages[REBUTTAL_BATCH - 1][0]
    return [m for i, m in enumerate(messages) if i < REBUTTAL_BATCH or m[0] == last]


def active_confirmed(*, character_id: int, now: datetime) -> list[Reflection]:
    """Confirmed, score above zero, not suppressed."""
    confirmed = Reflection.objects.filter(
        character_id=character_id, status=Reflection.Status.CONFIRMED, suppress=False
    )
    return [r for r in confirmed.order_by("pk") if score_of(r, now=now) > 0]


def _rebuttal_cursor(*, character_id: int) -> ReflectionCursor:
    """The character's cursor, read plainly; a missing one is made in a short transaction of its own
    (``character_row_ensure``), never one held across the LLM call. An import writes the same row
    under the character lock, and an insert made outside that lock deadlocked with it."""
    cursor = ReflectionCursor.objects.filter(character_id=character_id).first()
    if cursor is not None:
        return cursor
    with transaction.atomic():
        return character_row_ensure(ReflectionCursor, character_id)


@caused_by("rebuttal")
def reflections_rebuttal_tick(*, character_id: int, now: datetime | None = None) -> str:
    now = now or timezone.now()
    cursor = _rebuttal_cursor(character_id=character_id)
    if not switch_enabled(POWERFUL_MEMORY):
        ReflectionCursor.objects.filter(pk=cursor.pk).update(rebuttal_checked_until=now)
        return "off: cursor advanced"
    start = cursor.rebuttal_checked_until or now - REBUTTAL_FIRST_LOOKBACK
    rows = [
        r
        for r in raw_log_between(character_id=character_id, start=start, end=now, limit=REBUTTAL_SQL_LIMIT)
        if r.timestamp > start
    ]
    batch = _batch(_human_rows(rows))
    if not batch:
        return "no new user messages"
    until = batch[-1][0]
    reflections = active_confirmed(character_id=character_id, now=now)
    if not reflections:
        ReflectionCursor.objects.filter(pk=cursor.pk).update(rebuttal_checked_until=until)
        return "nothing confirmed to check"
    # One kernel job per window (keyed on where it starts): its failures back off and, the fifth
    # time, give the window up so the messages after it still get checked (liveness).
    window = cursor.rebuttal_checked_until.isoformat() if cursor.rebuttal_checked_until else "first"
    job, why = keyed_job_start(character_id=character_id, kind=REBUTTAL_JOB, key=window, now=now)
    if job is None:
        return f"waiting: {why}"
    character = Character.objects.get(pk=character_id)
    ids = [r.reflection_id for r in reflections]
    try:
        reply = chat_json(
            tier="summary",
            messages=rebuttal_messages(
                name=character.name,
                master=character.master_name,
                observations=[
                    f"[{r.reflection_id}] {truncate_tokens(r.text, OBSERVATION_TOKENS)}" for r in reflections
                ],
                messages=[text for _, text in batch],
                language=language_of([text for _, text in batch], character_language(character)),
            ),
            expect=dict,
            timeout=REBUTTAL_TIMEOUT,
        )
    except LLMUnavailable as exc:
        job_wait_for_provider(job=job, tier="summary")
        return f"waiting: {exc.reason}"
    except LLMError as exc:
        if job_fail(job=job, error=exc, now=now) != Job.Status.DEAD:
            return "failed: backoff"
        ReflectionCursor.objects.filter(pk=cursor.pk).update(rebuttal_checked_until=now)
        return "failed: window given up"
    denied = {
        rid
        for item in reply.get("verdicts") or []
        if isinstance(item, dict) and item.get("verdict") == "denied"
        for rid in [match_id(item.get("reflection_id"), ids)]
        if rid
    }
    with transaction.atomic():
        lock_character(character_id)
        for reflection in Reflection.objects.filter(
            character_id=character_id, reflection_id__in=list(denied), status=Reflection.Status.CONFIRMED
        ):
            event_append(
                character_id=character_id,
                event_type="reflection.rebutted",
                payload={"reflection_id": reflection.reflection_id, "ts": now.isoformat()},
            )
            reflection_transition(
                reflection=reflection,
                to=Reflection.Status.DENIED,
                now=now,
                reason="rebuttal",
                also={"denied_reason": "rebuttal"},
            )
        ReflectionCursor.objects.filter(pk=cursor.pk).update(rebuttal_checked_until=until)
        job_succeed(job=job, outcome=f"denied:{len(denied)}")
    return f"checked {len(batch)} messages, denied {len(denied)}"
