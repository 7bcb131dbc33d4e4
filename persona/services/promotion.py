"""Promotion of confirmed reflections into the persona (reference §3.5.3–3.5.4).

Powerful memory ON: the reflections layer confirms by score; here each confirmed reflection scoring
≥ 2 goes to the merge decision (correction tier): ``promote_fresh`` / ``merge_into`` / ``reject``.
Each reflection's decision is a kernel job keyed on its id: a 30-minute back-off between failures,
the fifth blocks the reflection as ``promote_blocked``, and with no provider it waits without
spending an attempt. Attempts are also recorded on the reflection (``promote_attempt_count`` /
``last_promote_attempt_at``), as the original's reflections.json has them. The answer is applied
only if the reflection is still ``confirmed`` (compare-and-set), and a failure never falls back to
``promote_fresh``. Powerful memory OFF: confirmed for 7 days → added as a time-driven entry, no LLM.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from nekomem.characters.language import character_language
from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.journal.causes import caused_by
from nekomem.journal.jobs import job_fail, job_start, job_succeed, job_wait_for_provider, register_job_kind
from nekomem.journal.models import Job
from nekomem.journal.work import NO_PROVIDER, no_provider_reason
from nekomem.language.counting import count_tokens
from nekomem.language.resolution import master_display_name
from nekomem.llm import LLMError, LLMUnavailable, chat_json, provider_status
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_enabled
from persona.models import PersonaEntry
from persona.prompts import merge_messages
from persona.services.entries import AddOutcome, entry_add, entry_merge_into, persona_prepare
from persona.services.records import promoted_entry_id, score_of
from persona.services.scoped import persona_subject_reflections_promote
from reflections.models import Reflection
from reflections.services import (
    PROMOTED_AT,
    Evidence,
    reflection_transition,
    reflections_auto_promote,
    surfaced_mark_handled,
)

logger = logging.getLogger(__name__)

PROMOTE_BACKOFF = timedelta(minutes=30)
MERGE_POOL_TOKENS = 4000
MERGE_TIMEOUT = 90
WEAK_MEMORY_AUTO_PROMOTE = timedelta(days=7)
ACTIONS = ("promote_fresh", "merge_into", "reject")


@dataclass
class PromotionReport:
    confirmed: int = 0
    outcomes: dict[str, str] = field(default_factory=dict)


# One kernel job per reflection (keyed on its id) holds its merge decision: a 30-minute back-off
# between failures, the fifth blocks it, and with no provider for the correction tier it waits
# without spending an attempt.
PROMOTE_JOB = "persona.promote"


def reflection_evidence(reflection: Reflection) -> Evidence:
    return reflection.evidence()


def _reflection_score(reflection: Reflection, now: datetime) -> float:
    return reflection.score(now=now)


# --- ON: the merge decision --------------------------------------------------------------------------------


def _merge_pool(*, character_id: int, reflection: Reflection, now: datetime) -> list[str]:
    """Same-entity, non-protected live entries and confirmed/promoted reflections, ≤ 4000 tokens."""
    lines: list[tuple[float, str]] = []
    for entry in PersonaEntry.objects.filter(
        character_id=character_id,
        section=reflection.entity,
        protected=False,
        archive_shard_path__isnull=True,
    ):
        score = score_of(entry, now=now)
        lines.append(
            (score, f'[persona.{entry.section}.{entry.entry_id}] "{entry.text}" (evidence_score={score:.2f})')
        )
    for other in Reflection.objects.filter(
        character_id=character_id,
        entity=reflection.entity,
        status__in=(Reflection.Status.CONFIRMED, Reflection.Status.PROMOTED),
    ).exclude(pk=reflection.pk):
        score = _reflection_score(other, now)
        lines.append(
            (score, f'[reflection.{other.reflection_id}] "{other.text}" (evidence_score={score:.2f})')
        )
    kept, spent = [], 0
    for _, line in sorted(lines, key=lambda item: -item[0]):
        cost = count_tokens(line)
        if spent + cost > MERGE_POOL_TOKENS:
            break
        spent += cost
        kept.append(line)
    return kept


def _validated_decision(reply: Any) -> dict[str, Any]:
    if reply.get("action") not in ACTIONS:
        raise ValueError(f"unknown action {reply.get('action')!r}")
    return reply  # type: ignore[no-any-return]


def _attempt_recorded(*, character_id: int, reflection_pk: int, now: datetime) -> Reflection | None:
    """Under the lock: the reflection if it is still confirmed, its attempt recorded in the original's
    ``promote_attempt_count`` / ``last_promote_attempt_at`` (they travel in reflections.json)."""
    with transaction.atomic():
        lock_character(character_id)
        reflection = Reflection.objects.filter(pk=reflection_pk, status=Reflection.Status.CONFIRMED).first()
        if reflection is None:
            return None
        # Bookkeeping only (no event): losing it in a crash costs at most one extra attempt.
        reflection.promote_attempt_count += 1
        reflection.last_promote_attempt_at = now
        reflection.save(update_fields=["promote_attempt_count", "last_promote_attempt_at", "updated_at"])
        return reflection


def _apply_decision(*, character_id: int, reflection_pk: int, decision: dict[str, Any], now: datetime) -> str:
    with transaction.atomic():
        character = lock_character(character_id)
        reflection = Reflection.objects.filter(pk=reflection_pk).first()
        # Compare-and-set on the from-status: a denial (or anything else) while the model thought wins.
        if reflection is None or reflection.status != Reflection.Status.CONFIRMED:
            return "stale"
        persona_prepare(character=character, now=now)
        action = decision["action"]
        if action == "reject":
            reflection_transition(
                reflection=reflection,
                to=Reflection.Status.DENIED,
                now=now,
                reason="llm_merge_rejected",
                also={
                    "denied_reason": "llm_merge_rejected",
                    "reject_reason": str(decision.get("reason") or ""),
                },
            )
            surfaced_mark_handled(character_id=character_id, reflection_ids=[reflection.reflection_id])
            return "rejected"
        if action == "merge_into":
            return _merge(character_id=character_id, reflection=reflection, decision=decision, now=now)
        return _add(character=character, reflection=reflection, source="reflection", now=now)


def _merge(*, character_id: int, reflection: Reflection, decision: dict[str, Any], now: datetime) -> str:
    target_id = decision.get("target_id")
    prefix = f"persona.{reflection.entity}."
    if not isinstance(target_id, str) or not target_id.startswith(prefix):
        return "invalid_target"
    target = PersonaEntry.objects.filter(
        character_id=character_id,
        entry_id=target_id[len(prefix) :],
        section=reflection.entity,
        protected=False,
        archive_shard_path__isnull=True,
    ).first()
    if target is None:
        return "invalid_target"
    merged_text = decision.get("merged_text")
    entry_merge_into(
        target=target,
        text=merged_text if isinstance(merged_text, str) else target.text,
        other=reflection_evidence(reflection),
        merged_from_id=reflection.reflection_id,
        now=now,
    )
    reflection_transition(
        reflection=reflection,
        to=Reflection.Status.MERGED,
        now=now,
        reason="promote_merge",
        also={"absorbed_into": target_id},
    )
    surfaced_mark_handled(character_id=character_id, reflection_ids=[reflection.reflection_id])
    return "merged"


def _add(*, character: Character, reflection: Reflection, source: str, now: datetime) -> str:
    fresh = source == "reflection"
    result = entry_add(
        character=character,
        entity=reflection.entity,
        text=reflection.text,
        source=source,
        source_id=reflection.reflection_id,
        entry_id=promoted_entry_id(reflection.reflection_id) if fresh else None,
        evidence=reflection_evidence(reflection) if fresh else None,
        now=now,
    )
    if result.outcome in (AddOutcome.ADDED, AddOutcome.ALREADY_HELD):
        reflection_transition(reflection=reflection, to=Reflection.Status.PROMOTED, now=now)
        surfaced_mark_handled(character_id=character.pk, reflection_ids=[reflection.reflection_id])
        return "promoted"
    if result.outcome is AddOutcome.REJECTED_CARD:
        reflection_transition(
            reflection=reflection,
            to=Reflection.Status.DENIED,
            now=now,
            reason="card_conflict",
            also={"denied_reason": "card_conflict"},
        )
        return "denied_card"
    return "queued_correction"


@caused_by("promotion")
def reflection_promote(*, character_id: int, reflection_pk: int, now: datetime | None = None) -> str:
    """One merge-on-promote decision for one confirmed reflection, as its kernel job allows; returns
    what happened (``skipped`` inside the back-off or once blocked, ``waiting: …`` with no provider)."""
    now = now or timezone.now()
    reflection_id = (
        Reflection.objects.filter(pk=reflection_pk, status=Reflection.Status.CONFIRMED)
        .values_list("reflection_id", flat=True)
        .first()
    )
    if reflection_id is None:
        return "skipped"
    job, why = job_start(
        character_id=character_id, kind=PROMOTE_JOB, key=reflection_id, now=now, stop_when_dead=True
    )
    if job is None:
        return f"waiting: {why}" if why.startswith(NO_PROVIDER) else "skipped"
    if provider_status("correction") is not None:
        job_wait_for_provider(job=job, tier="correction")  # no attempt spent while nobody can answer
        return f"waiting: {no_provider_reason('correction')}"
    reflection = _attempt_recorded(character_id=character_id, reflection_pk=reflection_pk, now=now)
    if reflection is None:
        job_succeed(job=job, outcome="moot")
        return "skipped"
    character = Character.objects.get(pk=character_id)
    language = character_language(character)
    messages = merge_messages(
        name=character.name,
        master=master_display_name(character.master_name, language),
        entity=reflection.entity,
        text=reflection.text,
        pool=_merge_pool(character_id=character_id, reflection=reflection, now=now),
        language=language,
    )
    try:
        decision = chat_json(
            tier="correction",
            messages=messages,
            expect=dict,
            thinking=True,
            timeout=MERGE_TIMEOUT,
            max_attempts=1,
            validate=_validated_decision,
        )
    except (LLMUnavailable, LLMError) as exc:
        # Never promote_fresh as a fallback: the reflection waits for the next try, and the fifth
        # failure blocks it (the kind's on_dead).
        logger.warning("promotion merge failed character=%s: %s", character_id, type(exc).__name__)
        job_fail(job=job, error=exc, now=now)
        return "skip_retry_pending"
    outcome = _apply_decision(
        character_id=character_id, reflection_pk=reflection_pk, decision=decision, now=now
    )
    job_succeed(job=job, outcome=outcome)
    logger.info("promotion character=%s action=%s outcome=%s", character_id, decision["action"], outcome)
    return outcome


def promotion_blocked(job: Job) -> None:
    """The fifth failed decision: the reflection stops trying (``promote_blocked``), as the original's
    sixth try does."""
    now = timezone.now()
    with transaction.atomic():
        lock_character(job.character_id)
        reflection = Reflection.objects.filter(
            character_id=job.character_id, reflection_id=job.key, status=Reflection.Status.CONFIRMED
        ).first()
        if reflection is not None:
            reflection_transition(
                reflection=reflection,
                to=Reflection.Status.PROMOTE_BLOCKED,
                now=now,
                reason="llm_unavailable",
                also={"promote_blocked_reason": "llm_unavailable"},
            )


# --- OFF: by age, no LLM -----------------------------------------------------------------------------------


def _promote_by_age(*, character_id: int, now: datetime) -> dict[str, str]:
    outcomes: dict[str, str] = {}
    with transaction.atomic():
        character = lock_character(character_id)
        persona_prepare(character=character, now=now)
        due = Reflection.objects.filter(
            character_id=character_id,
            status=Reflection.Status.CONFIRMED,
            confirmed_at__lte=now - WEAK_MEMORY_AUTO_PROMOTE,
        ).order_by("pk")
        for reflection in due:
            outcomes[reflection.reflection_id] = _add(
                character=character, reflection=reflection, source="reflection_time_driven", now=now
            )
    return outcomes


@caused_by("promotion")
def persona_promote_tick(*, character_id: int, now: datetime | None = None) -> PromotionReport:
    """The auto-promote loop for one character: confirm (reflections layer), then promote."""
    now = now or timezone.now()
    report = PromotionReport(confirmed=reflections_auto_promote(character_id=character_id, now=now))
    # Group-chat subjects' reflections take the time-driven path whatever the switch says (§3.5.1).
    report.outcomes.update(persona_subject_reflections_promote(character_id=character_id, now=now))
    if not switch_enabled(POWERFUL_MEMORY):
        report.outcomes.update(_promote_by_age(character_id=character_id, now=now))
        return report
    confirmed = Reflection.objects.filter(character_id=character_id, status=Reflection.Status.CONFIRMED)
    due = [
        (r.pk, r.reflection_id) for r in confirmed.order_by("pk") if _reflection_score(r, now) >= PROMOTED_AT
    ]
    for reflection_pk, reflection_id in due:
        report.outcomes[reflection_id] = reflection_promote(
            character_id=character_id, reflection_pk=reflection_pk, now=now
        )
    return report


def register_jobs() -> None:
    register_job_kind(
        PROMOTE_JOB,
        handler=None,
        tier="correction",
        backoff=lambda _failures: PROMOTE_BACKOFF,
        on_dead=promotion_blocked,
    )
