"""Persisting new facts with the three dedup layers of reference §3.3.4, and the arbitration queue.

Everything a batch changes (new rows, source upgrades, queued pairs, events, the recall-cache
version) happens in one transaction under the character lock: a failure anywhere rolls all of it
back, so a retried extraction can never meet an "empty success" left by its failed predecessor.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from facts.models import Fact, FactDedupPair
from facts.services.records import FactDraft, fact_from_draft, fact_to_file_dict
from nekomem.characters.locks import lock_character
from nekomem.characters.services import character_memory_changed
from nekomem.journal.services import event_append
from nekomem.textproc import dice_overlap, fts_tokens, normalized_identity

logger = logging.getLogger(__name__)

NEAR_DUPLICATE_OVERLAP = 0.25
# The original retrieved the top 10 by BM25 before scoring overlap; we score every fact, then keep
# as many, so a match ranked low by term rarity is not missed.
NEAR_DUPLICATE_TOP = 10


@dataclass
class PersistReport:
    created: list[Fact] = field(default_factory=list)
    upgraded: list[str] = field(default_factory=list)
    skipped_exact: int = 0
    skipped_identical: int = 0
    queued_pairs: int = 0


@dataclass
class _Known:
    """One existing fact as the near-duplicate layer sees it."""

    pk: int
    text: str
    identity: str
    tokens: frozenset[str]


def facts_persist(
    *, character_id: int, drafts: list[FactDraft], now: datetime | None = None
) -> PersistReport:
    """Dedup and store a batch of drafts atomically; returns what happened to each."""
    created_at = now or timezone.now()
    report = PersistReport()
    if not drafts:
        return report
    with transaction.atomic():
        character = lock_character(character_id)
        known = _KnownFacts(character_id=character_id, stop_names=character.stop_names)
        for draft in drafts:
            _persist_one(
                character_id=character_id, draft=draft, known=known, created_at=created_at, report=report
            )
        if report.created or report.upgraded:
            character_memory_changed(character_id=character_id)
    logger.info(
        "facts persisted character=%s created=%d upgraded=%d exact=%d identical=%d queued=%d",
        character_id,
        len(report.created),
        len(report.upgraded),
        report.skipped_exact,
        report.skipped_identical,
        report.queued_pairs,
    )
    return report


class _KnownFacts:
    """The character's facts (archive included) loaded once per batch, grown as the batch adds."""

    def __init__(self, *, character_id: int, stop_names: list[str]) -> None:
        self.stop_names = stop_names
        rows = Fact.objects.filter(character_id=character_id).values_list("pk", "hash", "text")
        self.by_hash: dict[str, int] = {}
        self.entries: list[_Known] = []
        for pk, hash_, text in rows:
            self.by_hash.setdefault(hash_, pk)
            self.entries.append(self._entry(pk, text))

    def _entry(self, pk: int, text: str) -> _Known:
        return _Known(pk, text, normalized_identity(text), frozenset(fts_tokens(text, self.stop_names)))

    def add(self, fact: Fact) -> None:
        self.by_hash[fact.hash] = fact.pk
        self.entries.append(self._entry(fact.pk, fact.text))

    def nearest(self, text: str) -> tuple[list[tuple[float, _Known]], str]:
        tokens = fts_tokens(text, self.stop_names)
        scored = [(dice_overlap(tokens, e.tokens), e) for e in self.entries]
        scored = [s for s in scored if s[0] > 0]
        scored.sort(key=lambda s: s[0], reverse=True)
        return scored[:NEAR_DUPLICATE_TOP], normalized_identity(text)


def _persist_one(
    *, character_id: int, draft: FactDraft, known: _KnownFacts, created_at: datetime, report: PersistReport
) -> None:
    existing_pk = known.by_hash.get(draft.hash)
    if existing_pk is not None:
        report.skipped_exact += 1
        if draft.source == Fact.Source.USER_OBSERVATION and _upgrade_source(existing_pk):
            report.upgraded.append(Fact.objects.get(pk=existing_pk).fact_id)
        return
    nearest, identity = known.nearest(draft.text)
    if any(entry.identity == identity for _, entry in nearest):
        # Only an identical normalised text is dropped; anything merely similar goes to the arbiter.
        report.skipped_identical += 1
        return
    fact = fact_from_draft(character_id=character_id, draft=draft, created_at=created_at)
    fact.save(force_insert=True)
    event_append(character_id=character_id, event_type="fact.added", payload=fact_to_file_dict(fact))
    known.add(fact)
    report.created.append(fact)
    if nearest and nearest[0][0] >= NEAR_DUPLICATE_OVERLAP:
        existing = Fact.objects.get(pk=nearest[0][1].pk)
        if dedup_pair_queue(character_id=character_id, candidate=fact, existing=existing, cosine=None):
            report.queued_pairs += 1


def _upgrade_source(existing_pk: int) -> bool:
    """One-way: a user re-stating what the AI disclosed makes it a user observation (and Stage-2 work)."""
    return (
        Fact.objects.filter(pk=existing_pk, source=Fact.Source.AI_DISCLOSURE).update(
            source=Fact.Source.USER_OBSERVATION, signal_processed=False, updated_at=timezone.now()
        )
        == 1
    )


def dedup_pair_queue(
    *, character_id: int, candidate: Fact, existing: Fact, cosine: float | None, now: datetime | None = None
) -> bool:
    """Queue one (candidate, existing) pair for LLM arbitration; False when it is already queued.

    Called by the text layer (cosine None) and by the embedding backfill (cosine > 0.85). Both facts
    must belong to ``character_id``.
    """
    if candidate.pk == existing.pk:
        return False
    if candidate.character_id != character_id or existing.character_id != character_id:
        raise ValueError("dedup pair facts must belong to the character")
    already = FactDedupPair.objects.filter(
        character_id=character_id, candidate__in=[candidate, existing], existing__in=[candidate, existing]
    ).exists()
    if already:
        return False
    FactDedupPair.objects.create(
        character_id=character_id,
        candidate=candidate,
        existing=existing,
        candidate_text=candidate.text,
        existing_text=existing.text,
        entity=candidate.entity,
        cosine=cosine,
        queued_at=now or timezone.now(),
    )
    return True
