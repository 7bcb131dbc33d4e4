"""Group-chat facts (reference §1.6, §2.4): stored under a subject, never in the master's memory.

Scoped facts skip Stage 2 and the near-duplicate layer: their hash is salted with the subject key and
scope, so the same sentence about two people is two facts, and the same sentence about one person
sent twice is one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from facts.models import FACT_SCHEMA_VERSION, RECALL_POOL, Fact, FactDedupPair
from facts.prompts import batch_extraction_messages, extraction_messages, language_of
from facts.services.extraction import EXTRACT_TIMEOUT
from facts.services.records import draft_from_llm, fact_id_for
from nekomem.characters.language import character_language
from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.characters.services import character_memory_changed
from nekomem.journal.causes import caused_by
from nekomem.journal.redaction import events_redact
from nekomem.llm import LLMError, LLMUnavailable, chat_json
from nekomem.subjects import Subject

SPEAKER_KEYS = ("speaker_label", "speaker_id", "speaker_trust")


@dataclass(frozen=True)
class ScopedFact:
    text: str
    importance: int = 5
    source: str = Fact.Source.USER_OBSERVATION
    entity: str = Fact.Entity.MASTER


@dataclass
class ScopedStored:
    fact_ids: list[str] = field(default_factory=list)
    created: int = 0


def scoped_fact_hash(*, subject: Subject, text: str) -> str:
    return hashlib.sha256(f"{subject.key}\n{subject.scope}\n{text}".encode()).hexdigest()[:16]


def subject_of_fact(fact: Fact) -> Subject:
    """The subject a stored fact is about: its key, with the scope its file fields name."""
    kind, _, subject_id = fact.subject_key.partition(":")
    scope = fact.extra.get("scope") if isinstance(fact.extra, dict) else None
    return Subject(
        kind=kind,
        subject_id=subject_id,
        scope=scope if isinstance(scope, str) and scope else fact.subject_key,
    )


def facts_scoped_store(
    *,
    character_id: int,
    subject: Subject,
    facts: Sequence[ScopedFact],
    speaker: dict[str, Any] | None = None,
    now: datetime | None = None,
) -> ScopedStored:
    """Store facts about one subject; a fact already stored for that subject and scope is not repeated."""
    now = now or timezone.now()
    stored = ScopedStored()
    provenance = {k: v for k, v in (speaker or {}).items() if k in SPEAKER_KEYS and v is not None}
    with transaction.atomic():
        lock_character(character_id)
        rows = Fact.with_subjects.filter(character_id=character_id, subject_key=subject.key)
        known = dict(rows.values_list("hash", "fact_id"))
        written: list[int] = []
        for item in facts:
            hash_ = scoped_fact_hash(subject=subject, text=item.text)
            if hash_ in known:
                stored.fact_ids.append(known[hash_])
                continue
            fact = Fact.with_subjects.create(
                character_id=character_id,
                fact_id=fact_id_for(created_at=now, hash_=hash_),
                text=item.text,
                importance=item.importance,
                entity=item.entity,
                source=item.source,
                hash=hash_,
                created_at=now,
                event_start_at=now,
                schema_version=FACT_SCHEMA_VERSION,
                # Stage 2 feeds the master's persona evidence: a third party's facts never do.
                signal_processed=True,
                extra={**subject.as_dict(), **provenance},
                subject_key=subject.key,
            )
            known[hash_] = fact.fact_id
            stored.fact_ids.append(fact.fact_id)
            stored.created += 1
            written.append(fact.pk)
        if written:
            character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=written)
    return stored


@caused_by("forget")
def facts_subject_forget(*, character_id: int, subject_keys: Collection[str]) -> dict[str, int]:
    """Delete every fact of these subjects (active and archived) and their pending dedup pairs."""
    keys = list(subject_keys)
    with transaction.atomic():
        lock_character(character_id)
        rows = Fact.with_subjects.filter(character_id=character_id, subject_key__in=keys)
        doomed = list(rows.values_list("pk", "archived"))
        pks = [pk for pk, _ in doomed]
        # Their versions in the journal keep no text: forgetting wins over history.
        events_redact(
            character_id=character_id,
            texts=list(rows.values_list("text", flat=True)),
            match=Q(payload__id__in=list(rows.values_list("fact_id", flat=True))),
        )
        pairs = FactDedupPair.objects.filter(character_id=character_id).filter(
            Q(candidate__in=pks) | Q(existing__in=pks)
        )
        pending = pairs.delete()[0]
        Fact.with_subjects.filter(pk__in=pks).delete()
        if pks:
            character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=pks)
    return {
        "facts": sum(1 for _, archived in doomed if not archived),
        "archived_facts": sum(1 for _, archived in doomed if archived),
        "pending_dedup": pending,
    }


class ScopedExtractionFailed(Exception):
    """The model could not be asked or gave no usable answer; the caller keeps its buffer (a 502)."""


@caused_by("extraction")
def facts_scoped_extract(
    *,
    character: Character,
    subject: Subject,
    lines: list[str],
    speaker_label: str | None = None,
    display_name: str | None = None,
    language: str | None = None,
) -> list[ScopedFact]:
    """One Stage-1 call over a group digest or one participant's turns.

    The prompt's "master" is the speaker (``speaker_label``), else the subject's display name or key,
    so the facts are about that person or group and never attributed to the master.
    """
    about = speaker_label or display_name or subject.key
    lang = language_of(lines, character_language(character, request_language=language))
    prompt = extraction_messages(
        name=character.name, master=about, lines=[("user", line) for line in lines], language=lang
    )
    try:
        reply = chat_json(
            tier="summary", messages=prompt, expect=list, thinking=False, timeout=EXTRACT_TIMEOUT
        )
    except (LLMError, LLMUnavailable) as exc:  # no provider, transport, unparsable reply: retry later
        raise ScopedExtractionFailed(str(exc)) from exc
    return _scoped_facts(reply)


@dataclass(frozen=True)
class BatchSegment:
    """One segment of a batched group digest: whose turns (``speaker``, as the model may read it) and
    their texts. The speaker's stable id never goes here: it is not shown to the model."""

    speaker: str
    lines: list[str]


def _batch_reply(reply: Any) -> dict[str, Any]:
    if not isinstance(reply.get("segments"), list):
        raise ValueError("no segments list")
    return reply  # type: ignore[no-any-return]


def _scoped_facts(items: list[Any]) -> list[ScopedFact]:
    drafts = [d for d in (draft_from_llm(item, source=Fact.Source.USER_OBSERVATION) for item in items) if d]
    return [
        ScopedFact(text=d.text[:2000], importance=d.importance, source=d.source, entity=d.entity)
        for d in drafts
    ]


@caused_by("extraction")
def facts_scoped_extract_batch(
    *, character: Character, segments: Sequence[BatchSegment], language: str | None = None
) -> list[list[ScopedFact] | None]:
    """One Stage-1 call over every segment of a batch (reference §1.6), labelled and numbered in request
    order; one result per segment in that order. ``None`` marks a segment the model skipped (no entry,
    or an entry without a facts list): the caller answers it ``failed`` and only it is sent again. A
    segment without any turn to read is ``[]`` and not shown to the model. Raises
    ``ScopedExtractionFailed`` when the call itself fails or its answer has no segments list."""
    asked = [i for i, segment in enumerate(segments) if segment.lines]
    results: list[list[ScopedFact] | None] = [[] if not s.lines else None for s in segments]
    if not asked:
        return results
    every_line = [line for segment in segments for line in segment.lines]
    lang = language_of(every_line, character_language(character, request_language=language))
    prompt = batch_extraction_messages(
        name=character.name,
        segments=[(segments[i].speaker, [("user", line) for line in segments[i].lines]) for i in asked],
        language=lang,
    )
    try:
        reply = chat_json(
            tier="summary",
            messages=prompt,
            expect=dict,
            thinking=False,
            timeout=EXTRACT_TIMEOUT,
            validate=_batch_reply,
        )
    except (LLMError, LLMUnavailable) as exc:
        raise ScopedExtractionFailed(str(exc)) from exc
    for entry in reply["segments"]:
        if not isinstance(entry, dict):
            continue
        number, items = entry.get("segment"), entry.get("facts")
        if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= len(asked):
            continue  # a number we never sent: nothing of ours to attribute it to
        position = asked[number - 1]
        if results[position] is None and isinstance(items, list):
            results[position] = _scoped_facts(items)
    return results
