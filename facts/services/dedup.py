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

from facts.models import RECALL_POOL, Fact, FactDedupPair
from facts.services.records import FactDraft, fact_from_draft, fact_to_file_dict
from facts.services.tokens import (
    dedup_index_refresh,
    dedup_key_for,
    shared_token_counts,
    token_rows,
    token_rows_insert,
    token_set,
    tokens_field,
)
from nekomem.characters.locks import lock_character
from nekomem.characters.services import character_memory_changed
from nekomem.journal.services import event_append
from nekomem.language.normalize import normalized_identity

logger = logging.getLogger(__name__)

NEAR_DUPLICATE_OVERLAP = 0.25
# The original retrieved the top 10 by BM25 before scoring overlap; we score every fact sharing a
# token, then keep as many, so a match ranked low by term rarity is not missed.
NEAR_DUPLICATE_TOP = 10


@dataclass
class PersistReport:
    created: list[Fact] = field(default_factory=list)
    upgraded: list[str] = field(default_factory=list)
    skipped_exact: int = 0
    skipped_identical: int = 0
    queued_pairs: int = 0


@dataclass(frozen=True)
class _Near:
    """One existing fact close to a draft: its Dice overlap and what the identity test needs."""

    score: float
    pk: int
    identity: str


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
            # An upgraded source is not visible to recall; only the new rows are.
            character_memory_changed(
                character_id=character_id, pool=RECALL_POOL, rows=[fact.pk for fact in report.created]
            )
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
    """The character's facts (archive included) as the dedup layers see them, through the database.

    Exact duplicates are one probe of the (character, hash) index; near duplicates come from the
    token index (``facts.services.tokens``), brought up to date first. Facts the batch adds are indexed
    as they are saved, so later drafts of the same batch see them.
    """

    def __init__(self, *, character_id: int, stop_names: list[str]) -> None:
        self.character_id = character_id
        self.stop_names = stop_names
        dedup_index_refresh(character_id=character_id, stop_names=stop_names)

    def by_hash(self, hash_: str) -> int | None:
        # The first in the original's load order (created_at, id) wins, as a dict.setdefault did.
        return (
            Fact.objects.filter(character_id=self.character_id, hash=hash_)
            .order_by("created_at", "pk")
            .values_list("pk", flat=True)
            .first()
        )

    def tokens(self, text: str) -> frozenset[str]:
        return token_set(text, self.stop_names)

    def nearest(self, tokens: frozenset[str]) -> list[_Near]:
        """The top 10 by Dice overlap (> 0), ties in the facts' (created_at, id) order, as a full scan
        of the character's facts in that order kept them."""
        size = len(tokens)
        scored = [
            (2 * shared / (size + other), pk)
            for pk, other, shared in shared_token_counts(character_id=self.character_id, tokens=tokens)
        ]
        if not scored:
            return []
        scored.sort(reverse=True)
        # Only the facts tied with the 10th score need their dates to be ordered.
        cutoff = scored[min(NEAR_DUPLICATE_TOP, len(scored)) - 1][0]
        score_of = {pk: score for score, pk in scored if score >= cutoff}
        texts: dict[int, str] = {}
        created: dict[int, datetime] = {}
        if len(score_of) <= NEAR_DUPLICATE_TOP:
            rows = Fact.objects.filter(pk__in=list(score_of)).order_by()
            for pk, created_at, text in rows.values_list("pk", "created_at", "text"):
                created[pk], texts[pk] = created_at, text
        else:  # many ties: order them by date first, then read the texts of the ten kept
            pks = list(score_of)
            for i in range(0, len(pks), 900):
                chunk = Fact.objects.filter(pk__in=pks[i : i + 900]).order_by()
                created.update(chunk.values_list("pk", "created_at"))
        top = sorted(score_of, key=lambda pk: (-score_of[pk], created[pk], pk))[:NEAR_DUPLICATE_TOP]
        if not texts:
            texts = dict(Fact.objects.filter(pk__in=top).order_by().values_list("pk", "text"))
        return [_Near(score_of[pk], pk, normalized_identity(texts[pk])) for pk in top]

    def add(self, fact: Fact, tokens: frozenset[str]) -> None:
        """Save a new fact together with its index entries."""
        fact.dedup_tokens = tokens_field(tokens)
        fact.dedup_key = dedup_key_for(self.stop_names)
        fact.save(force_insert=True)
        token_rows_insert(token_rows(character_id=self.character_id, fact_pk=fact.pk, tokens=tokens))


def _persist_one(
    *, character_id: int, draft: FactDraft, known: _KnownFacts, created_at: datetime, report: PersistReport
) -> None:
    existing_pk = known.by_hash(draft.hash)
    if existing_pk is not None:
        report.skipped_exact += 1
        if draft.source == Fact.Source.USER_OBSERVATION and _upgrade_source(existing_pk):
            report.upgraded.append(Fact.objects.get(pk=existing_pk).fact_id)
        return
    tokens = known.tokens(draft.text)
    nearest = known.nearest(tokens)
    identity = normalized_identity(draft.text)
    if any(near.identity == identity for near in nearest):
        # Only an identical normalised text is dropped; anything merely similar goes to the arbiter.
        report.skipped_identical += 1
        return
    fact = fact_from_draft(character_id=character_id, draft=draft, created_at=created_at)
    known.add(fact, tokens)
    event_append(character_id=character_id, event_type="fact.added", payload=fact_to_file_dict(fact))
    report.created.append(fact)
    if nearest and nearest[0].score >= NEAR_DUPLICATE_OVERLAP:
        existing = Fact.objects.get(pk=nearest[0].pk)
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
        candidate_fact_id=candidate.fact_id,
        existing_fact_id=existing.fact_id,
        candidate_text=candidate.text,
        existing_text=existing.text,
        entity=candidate.entity,
        cosine=cosine,
        queued_at=now or timezone.now(),
    )
    return True
