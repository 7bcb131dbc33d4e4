"""LLM arbitration of queued near-duplicate pairs (idle maintenance, powerful memory ON only)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from facts.models import RECALL_POOL, Fact, FactDedupPair
from facts.prompts import arbitration_messages
from facts.selectors import dedup_pairs_pending
from facts.services.editing import fact_text_set
from facts.services.tokens import fact_index_add
from nekomem.characters.language import character_language
from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.characters.services import character_memory_changed
from nekomem.journal.causes import caused_by
from nekomem.journal.jobs import job_fail, job_start, job_succeed, job_wait_for_provider
from nekomem.journal.models import Job
from nekomem.journal.work import no_provider_reason
from nekomem.language.resolution import language_of
from nekomem.llm import LLMError, LLMUnavailable, chat_json
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_enabled

logger = logging.getLogger(__name__)

ARBITRATION_BATCH = 20
DEDUP_JOB = "facts.dedup"
IDLE_BEFORE_MAINTENANCE = timedelta(seconds=10)
ACTIONS = ("merge", "replace", "keep_both")
# The decision recorded on a pair that was closed without the LLM because a side no longer exists.
ORPHANED = "fact_gone"


@dataclass(frozen=True)
class ArbitrationResult:
    resolved: int = 0
    reason: str = ""


def _decisions(value: Any, size: int) -> dict[int, dict[str, Any]]:
    """Index → decision for valid entries only; pairs the model skipped stay queued."""
    out: dict[int, dict[str, Any]] = {}
    for item in value:
        if not isinstance(item, dict) or item.get("action") not in ACTIONS:
            continue
        index = item.get("index")
        if isinstance(index, int) and 0 <= index < size:
            out[index] = item
    return out


@caused_by("dedup")
def dedup_pairs_arbitrate(*, character_id: int, now: datetime | None = None) -> ArbitrationResult:
    """Resolve up to 20 queued pairs with one LLM call."""
    now = now or timezone.now()
    if not switch_enabled(POWERFUL_MEMORY):
        return ArbitrationResult(reason="powerful memory off: the queue accumulates")
    character = Character.objects.get(pk=character_id)
    if character.last_activity_at and now - character.last_activity_at < IDLE_BEFORE_MAINTENANCE:
        return ArbitrationResult(reason="not idle")
    _pairs_close_orphaned(character_id=character_id, now=now)
    pairs = dedup_pairs_pending(character_id=character_id, limit=ARBITRATION_BATCH)
    if not pairs:
        return ArbitrationResult(reason="queue empty")
    prompt = arbitration_messages(
        name=character.name,
        pairs=[(i, _text(p.candidate), _text(p.existing)) for i, p in enumerate(pairs)],
        language=language_of([_text(p.candidate) for p in pairs], character_language(character)),
    )
    job, why = job_start(character_id=character_id, kind=DEDUP_JOB, now=now)
    if job is None:
        return ArbitrationResult(reason=f"waiting: {why}")
    try:
        reply = chat_json(tier="summary", messages=prompt, expect=list, thinking=False, timeout=60)
    except LLMUnavailable:
        job_wait_for_provider(job=job, tier="summary")
        return ArbitrationResult(reason=f"waiting: {no_provider_reason('summary')}")
    except LLMError as exc:
        if job_fail(job=job, error=exc, now=now) == Job.Status.DEAD:
            _pairs_dead(pairs=pairs, now=now)
        return ArbitrationResult(reason=f"failed: {type(exc).__name__}")
    resolved = _apply(
        character_id=character_id, pairs=pairs, decisions=_decisions(reply, len(pairs)), now=now
    )
    job_succeed(job=job, outcome=f"resolved:{resolved}")
    return ArbitrationResult(resolved=resolved)


def _text(fact: Fact | None) -> str:
    # The selector only returns pairs with both sides present.
    return fact.text if fact is not None else ""


def _pairs_close_orphaned(*, character_id: int, now: datetime) -> None:
    """A pending pair whose fact was deleted meanwhile has nothing left to decide; close it."""
    FactDedupPair.objects.filter(
        Q(candidate__isnull=True) | Q(existing__isnull=True),
        character_id=character_id,
        status=FactDedupPair.Status.PENDING,
    ).update(status=FactDedupPair.Status.DONE, decision=ORPHANED, resolved_at=now)


def _pairs_dead(*, pairs: list[FactDedupPair], now: datetime) -> None:
    """The batch failed five times: its pairs leave the queue, so the pairs behind them get a turn."""
    FactDedupPair.objects.filter(pk__in=[p.pk for p in pairs], status=FactDedupPair.Status.PENDING).update(
        status=FactDedupPair.Status.DEAD, resolved_at=now
    )


def _apply(
    *, character_id: int, pairs: list[FactDedupPair], decisions: dict[int, dict[str, Any]], now: datetime
) -> int:
    resolved = 0
    changed: list[int] = []
    with transaction.atomic():
        character = lock_character(character_id)
        for index, pair in enumerate(pairs):
            decision = decisions.get(index)
            if decision is None:
                continue
            merged_text = _apply_one(pair=pair, decision=decision, stop_names=character.stop_names)
            if merged_text is not None:
                changed += [pk for pk in (pair.candidate_id, pair.existing_id) if pk is not None]
            # The pair row stays as the record of the decision; a deleted side's key becomes null.
            FactDedupPair.objects.filter(pk=pair.pk).update(
                status=FactDedupPair.Status.DONE,
                decision=decision["action"],
                merged_text=merged_text or "",
                resolved_at=now,
            )
            resolved += 1
        if changed:
            character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=changed)
    return resolved


def _apply_one(*, pair: FactDedupPair, decision: dict[str, Any], stop_names: list[str]) -> str | None:
    """Apply one decision; returns the surviving text when facts changed, None when nothing did.

    A side already gone (deleted, merged by an earlier pair) makes it a no-op.
    """
    candidate = Fact.objects.filter(pk=pair.candidate_id).first() if pair.candidate_id else None
    existing = Fact.objects.filter(pk=pair.existing_id).first() if pair.existing_id else None
    if candidate is None or existing is None:
        return None
    action = decision["action"]
    if action == "merge":
        merged = decision.get("text")
        text_changed = isinstance(merged, str) and bool(merged.strip()) and merged.strip() != existing.text
        if text_changed:
            fact_text_set(fact=existing, text=str(merged).strip())
        existing.importance = max(existing.importance, candidate.importance)
        existing.save()
        if text_changed:
            fact_index_add(fact=existing, stop_names=stop_names)
        candidate.delete()
        return existing.text
    if action == "replace":
        existing.delete()
        return candidate.text
    return None
