"""Reflection synthesis (reference §3.5.1): five or more unabsorbed facts become one pending reflection.

The id is derived from the source fact ids, so a retry after a crash finds the reflection it already
wrote and only re-marks the facts absorbed. Failures back off on a key over *all* unabsorbed ids
(any new fact starts the count again), die after five, and get one probe every five hours.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import zip_longest
from typing import Any

import numpy as np
from django.db import transaction
from django.utils import timezone

from facts.models import Fact
from facts.services import (
    clean_event_when,
    facts_mark_absorbed,
    language_of,
    normalize_entity,
    resolve_event_when,
)
from nekomem.characters.language import character_language
from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.characters.services import character_memory_changed
from nekomem.embeddings import Embedder, decode_vector, get_embedder, text_fingerprint
from nekomem.journal.causes import caused_by
from nekomem.journal.jobs import job_fail, job_succeed, job_wait_for_provider
from nekomem.journal.models import Job
from nekomem.journal.services import event_append
from nekomem.llm import LLMError, LLMUnavailable, chat_json
from reflections.evidence import initial_reinforcement
from reflections.models import RECALL_POOL, Reflection
from reflections.ontology import ontology_validated
from reflections.prompts import synthesis_messages
from reflections.reranking import RerankRecord, rerank
from reflections.selectors import (
    absorbed_fact_vectors,
    reflection_get,
    subjects_with_synthesis_candidates,
    synthesis_candidates,
)
from reflections.services.records import reflection_id_for, reflection_to_file_dict
from reflections.services.retries import SUBJECT_SYNTHESIS_JOB, SYNTHESIS_JOB, keyed_job_start

logger = logging.getLogger(__name__)

MIN_FACTS_FOR_REFLECTION = 5
MAX_FACTS_PER_REFLECTION = 20
RELATED_PER_FACT = 3
RELATED_CAP = 20
SYNTHESIS_TIMEOUT = 110
SURFACE_COOLDOWN = timedelta(minutes=30)


@dataclass(frozen=True)
class SynthesisResult:
    reflection: Reflection | None = None
    reason: str = ""

    def as_wire(self) -> dict[str, Any] | None:
        return reflection_to_file_dict(self.reflection) if self.reflection is not None else None


def _backoff_key(facts: list[Fact]) -> str:
    digest = hashlib.sha256()
    for fact_id in sorted(f.fact_id for f in facts):
        digest.update(fact_id.encode("utf-8") + b"\x00")
    return digest.hexdigest()[:32]


def _fact_vector(fact: Fact, embedder: Embedder) -> np.ndarray | None:
    if fact.embedding_model_id != embedder.model_id or fact.embedding_text_sha256 != text_fingerprint(
        fact.text
    ):
        return None
    return decode_vector(fact.embedding, embedder.dim)


def _stored(vector: np.ndarray) -> Callable[[list[str]], np.ndarray | None]:
    """The fact's own stored vector stands in for embedding its text again."""
    return lambda _queries: np.atleast_2d(vector)


def related_context(
    *, character_id: int, facts: list[Fact], embedder: Embedder | None, subject_key: str = ""
) -> list[str]:
    """Cosine top 3 absorbed facts (archive included) per new fact, round-robin, deduplicated, ≤ 20.

    Empty without vectors: an unrelated "best" fact would only mislead the synthesis.
    """
    if embedder is None:
        return []
    pool = [
        RerankRecord(id=fid, text=text, vector=vector)  # type: ignore[arg-type]
        for fid, text, vector in absorbed_fact_vectors(
            character_id=character_id, embedder=embedder, subject_key=subject_key
        )
    ]
    if not pool:
        return []
    per_fact: list[list[str]] = []
    for fact in facts:
        vector = _fact_vector(fact, embedder)
        if vector is None:
            continue
        ranked = rerank(
            queries=[fact.text],
            records=pool,
            budget=RELATED_PER_FACT,
            on_no_vectors="empty",
            embed=_stored(vector),
        )
        per_fact.append([r.text for r in ranked])
    related: list[str] = []
    for round_ in zip_longest(*per_fact):
        for text in round_:
            if text is not None and text not in related:
                related.append(text)
    return related[:RELATED_CAP]


def _validated_reply(reply: Any) -> dict[str, Any]:
    text = reply.get("reflection")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("no reflection text")
    return reply  # type: ignore[no-any-return]


@caused_by("synthesis")
def reflection_synthesize(*, character_id: int, now: datetime | None = None) -> SynthesisResult:
    """One synthesis attempt over the master's facts. Raises nothing for LLM trouble: it is counted."""
    return _synthesize(character_id=character_id, subject_key="", now=now or timezone.now())


@caused_by("synthesis")
def reflections_subjects_synthesize(
    *, character_id: int, now: datetime | None = None
) -> dict[str, SynthesisResult]:
    """One synthesis attempt per group-chat subject holding enough unabsorbed facts (§3.5.1, last line):
    the same thresholds and back-off as the master's, each subject on its own, over that subject's facts
    only. The reflection belongs to the subject and is created ``confirmed`` (its one lifecycle is the
    time-driven promotion into the subject's persona section)."""
    now = now or timezone.now()
    keys = subjects_with_synthesis_candidates(character_id=character_id, minimum=MIN_FACTS_FOR_REFLECTION)
    return {key: _synthesize(character_id=character_id, subject_key=key, now=now) for key in keys}


def _job_start(
    *, character_id: int, subject_key: str, unabsorbed: list[Fact], now: datetime
) -> tuple[Any, str]:
    backoff = _backoff_key(unabsorbed)
    if not subject_key:
        return keyed_job_start(character_id=character_id, kind=SYNTHESIS_JOB, key=backoff, now=now)
    prefix = hashlib.sha256(subject_key.encode("utf-8")).hexdigest()[:16] + "."
    return keyed_job_start(
        character_id=character_id, kind=SUBJECT_SYNTHESIS_JOB, key=prefix + backoff, now=now, within=prefix
    )


def _about(*, character: Character, subject_key: str, facts: list[Fact]) -> str:
    """Who the facts are about, as the prompt names them: the master, or the subject's speaker label
    (the most frequent among its facts), else the subject's id."""
    if not subject_key:
        return character.master_name
    labels = Counter(
        str(f.extra["speaker_label"])
        for f in facts
        if isinstance(f.extra, dict) and f.extra.get("speaker_label")
    )
    if labels:
        return labels.most_common(1)[0][0]
    return subject_key.split(":", 1)[1] if ":" in subject_key else subject_key


def _synthesize(*, character_id: int, subject_key: str, now: datetime) -> SynthesisResult:
    unabsorbed = synthesis_candidates(character_id=character_id, subject_key=subject_key)
    if len(unabsorbed) < MIN_FACTS_FOR_REFLECTION:
        return SynthesisResult(reason="not enough facts")
    chosen = unabsorbed[:MAX_FACTS_PER_REFLECTION]
    fact_ids = sorted(f.fact_id for f in chosen)
    reflection_id = reflection_id_for(fact_ids)
    if reflection_get(character_id=character_id, reflection_id=reflection_id, subject_key=subject_key):
        # Idempotent retry: the reflection was written, the facts were not yet marked.
        with transaction.atomic():
            lock_character(character_id)
            facts_mark_absorbed(character_id=character_id, fact_ids=fact_ids)
        return SynthesisResult(reason="already synthesized")
    job, why = _job_start(character_id=character_id, subject_key=subject_key, unabsorbed=unabsorbed, now=now)
    if job is None:
        return SynthesisResult(reason=why)
    try:
        character = Character.objects.get(pk=character_id)
        related = related_context(
            character_id=character_id,
            facts=chosen,
            embedder=get_embedder(wait=False),
            subject_key=subject_key,
        )
        messages = synthesis_messages(
            name=character.name,
            master=_about(character=character, subject_key=subject_key, facts=chosen),
            facts=[(f.text, f.importance) for f in chosen],
            related=related,
            language=language_of([f.text for f in chosen], character_language(character)),
        )
        reply = chat_json(
            tier="summary",
            messages=messages,
            expect=dict,
            thinking=True,
            timeout=SYNTHESIS_TIMEOUT,
            validate=_validated_reply,
        )
    except LLMUnavailable as exc:
        job_wait_for_provider(job=job, tier="summary")
        return SynthesisResult(reason=f"waiting: {exc.reason}")
    except Exception as exc:  # LLM errors and anything else: one attempt of the kernel's five
        status = job_fail(job=job, error=exc, now=now)
        if not isinstance(exc, LLMError):
            raise
        return SynthesisResult(reason=f"failed: {'dead' if status == Job.Status.DEAD else 'backoff'}")
    reflection = _store(
        character_id=character_id,
        chosen=chosen,
        reply=reply,
        reflection_id=reflection_id,
        now=now,
        subject_key=subject_key,
    )
    job_succeed(job=job, outcome="synthesized")
    logger.info(
        "reflection synthesized character=%s subject=%s facts=%d related=%d",
        character_id,
        bool(subject_key),
        len(chosen),
        len(related),
    )
    return SynthesisResult(reflection=reflection, reason="synthesized")


def _subject_fields(chosen: list[Fact]) -> dict[str, Any]:
    """The subject's wire fields (kind, id, scope), as its facts carry them: recall's subject filter and
    export read them from the reflection's ``extra``."""
    for fact in chosen:
        extra = fact.extra if isinstance(fact.extra, dict) else {}
        if extra.get("subject_kind") and extra.get("subject_id"):
            return {k: extra[k] for k in ("subject_kind", "subject_id", "scope") if extra.get(k)}
    return {}


def _store(
    *,
    character_id: int,
    chosen: list[Fact],
    reply: dict[str, Any],
    reflection_id: str,
    now: datetime,
    subject_key: str = "",
) -> Reflection | None:
    text = str(reply["reflection"]).strip()
    entity = normalize_entity(reply.get("entity", "master"))
    ontology = ontology_validated(
        text=text,
        entity=entity,
        relation_type=reply.get("relation_type"),
        temporal_scope=reply.get("temporal_scope"),
        subject=reply.get("subject"),
    )
    event_when = clean_event_when(reply.get("event_when"))
    start, end = resolve_event_when(event_when, now) if event_when else (None, None)
    seed = initial_reinforcement(max(f.importance for f in chosen))
    fact_ids = sorted(f.fact_id for f in chosen)
    with transaction.atomic():
        lock_character(character_id)
        existing = reflection_get(
            character_id=character_id, reflection_id=reflection_id, subject_key=subject_key
        )
        # A subject's reflection is confirmed at once: its only lifecycle is the time-driven one (§3.5.4).
        scoped = bool(subject_key)
        if existing is None:
            reflection = Reflection.with_subjects.create(
                character_id=character_id,
                reflection_id=reflection_id,
                text=text,
                entity=entity,
                status=Reflection.Status.CONFIRMED if scoped else Reflection.Status.PENDING,
                confirmed_at=now if scoped else None,
                subject_key=subject_key,
                extra=_subject_fields(chosen) if scoped else {},
                source_fact_ids=fact_ids,
                created_at=now,
                next_eligible_at=now + SURFACE_COOLDOWN,
                reinforcement=seed,
                rein_last_signal_at=now if seed > 0 else None,
                relation_type=ontology.relation_type,
                temporal_scope=ontology.temporal_scope,
                subject=ontology.subject,
                event_when_raw=event_when,
                event_start_at=start,
                event_end_at=end,
            )
            event_append(
                character_id=character_id,
                event_type="reflection.synthesized",
                payload=reflection_to_file_dict(reflection),
            )
            character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=[reflection.pk])
        else:
            reflection = existing
        facts_mark_absorbed(character_id=character_id, fact_ids=fact_ids)
    return reflection
