"""``scoped_history`` (reference §1.6): facts extracted from a group chat's turns, stored per subject,
with the speaker's trust resolved from the ledger and recorded once per event.

Three shapes: a single segment, a batch (one model call; a segment the model skipped fails alone), and
a keyed write of either shape. A keyed write journals the extraction and its trust write before it
applies them, so a retry of a pending key never asks the model again and replays the trust write until
it is persisted; a finished key answers its retry as a duplicate. A forget after the caller's epoch
(keyed) or during the extraction (unkeyed) wins: that subject's write is dropped and still answered.
No transaction spans the protocol: it waits on the model, and every step is idempotent.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import asdict, dataclass
from typing import Any

from facts.services import (
    BatchSegment,
    ScopedExtractionFailed,
    ScopedFact,
    facts_scoped_extract,
    facts_scoped_extract_batch,
    facts_scoped_store,
)
from groupchat.identity.services import speaker_trust_record, speaker_trust_resolve
from groupchat.identity.trust import TrustInput, TrustOutcome, outcomes_combined
from groupchat.services.scoped import (
    scoped_write_is_stale,
    scoped_write_key_begin,
    scoped_write_key_finish,
    scoped_write_key_journal,
    subject_forget_generation,
    subject_record_touch,
)
from nekomem.characters.models import Character
from nekomem.subjects import Subject

logger = logging.getLogger(__name__)

# The trust block of a segment with nothing about trust to write (the wire client reads it as accepted).
TRUST_NOTHING = TrustOutcome().block()


class HistoryExtractionFailed(RuntimeError):
    """The model could not extract the facts; nothing was written and a retry is safe."""


@dataclass(frozen=True)
class HistorySegment:
    """One speaker's turns about one subject: the human lines the model reads, and who said them."""

    subject: Subject
    history: str
    lines: list[str]
    speaker_label: str | None
    speaker_id: str | None
    display_name: str | None
    trust: float | None
    trust_input: TrustInput | None = None


@dataclass(frozen=True)
class WriteKey:
    """A request's idempotency key and the forget epoch it was written against, per subject key."""

    key: str
    epochs: dict[str, int]


@dataclass(frozen=True)
class HistoryRequest:
    segments: list[HistorySegment]
    language: str | None
    batched: bool
    write_key: WriteKey | None = None


def scoped_history_write(*, character: Character, request: HistoryRequest) -> dict[str, Any]:
    """The answer of ``scoped_history``. Raises ``KeyReused`` (a key sent again with another meaning)
    and ``HistoryExtractionFailed``."""
    if request.write_key is not None:
        return _keyed(character=character, request=request, write_key=request.write_key)
    if not request.batched:
        return _single(character=character, segment=request.segments[0], language=request.language)
    return _batch(character=character, segments=request.segments, language=request.language)


def _server_derived(segment: HistorySegment) -> bool:
    return segment.trust_input is not None and segment.trust_input.server


def _fingerprint(request: HistoryRequest, write_key: WriteKey) -> str:
    # Labels, display names and client_requested_at are not part of what the request means.
    meaning: dict[str, Any] = {
        "segments": [
            {
                "history": s.history,
                "subject": s.subject.as_dict(),
                "speaker_id": s.speaker_id,
                "trust": s.trust,
                # Server-derived trust inputs are part of the meaning (absent: the older fingerprint).
                **(
                    {"trust_input": s.trust_input.as_dict()} if s.trust_input and s.trust_input.server else {}
                ),
            }
            for s in request.segments
        ],
        "epochs": write_key.epochs,
        "language": request.language,
    }
    return hashlib.sha256(json.dumps(meaning, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _extract(*, character: Character, segment: HistorySegment, language: str | None) -> list[ScopedFact]:
    if not segment.lines:
        return []
    return facts_scoped_extract(
        character=character,
        subject=segment.subject,
        lines=segment.lines,
        speaker_label=segment.speaker_label,
        display_name=segment.display_name,
        language=language,
    )


def _extract_batch(
    *, character: Character, segments: list[HistorySegment], language: str | None
) -> list[list[ScopedFact] | None]:
    """One LLM call over the whole batch (§1.6); ``None`` where the model skipped a segment."""
    return facts_scoped_extract_batch(
        character=character,
        segments=[
            BatchSegment(speaker=s.speaker_label or s.display_name or s.subject.key, lines=s.lines)
            for s in segments
        ],
        language=language,
    )


def _apply(
    *,
    character: Character,
    segment: HistorySegment,
    facts: list[ScopedFact],
    language: str | None,
    stale: bool = False,
    trust: TrustOutcome | None = None,
) -> dict[str, Any]:
    """Store one segment's facts; idempotent per subject and text, so a resumed journal adds nothing twice."""
    if stale:  # forgotten after the caller's epoch: answered processed, nothing written
        return {"subject": segment.subject.as_dict(), "created": 0, "dropped": len(facts), "fact_ids": []}
    speaker = {
        "speaker_label": segment.speaker_label,
        "speaker_id": segment.speaker_id,
        # The ledger's resolved trust (or the legacy value as sent); none while the source is gated.
        "speaker_trust": trust.resolved if trust is not None else segment.trust,
    }
    stored = facts_scoped_store(
        character_id=character.pk, subject=segment.subject, facts=facts, speaker=speaker
    )
    subject_record_touch(
        character_id=character.pk,
        subject=segment.subject,
        display_name=segment.display_name,
        language=language,
    )
    return {
        "subject": segment.subject.as_dict(),
        "created": stored.created,
        "dropped": len(facts) - stored.created,
        "fact_ids": stored.fact_ids,
    }


def _batch_fields(result: dict[str, Any], trust: TrustOutcome | None = None) -> dict[str, Any]:
    new = result["fact_ids"][len(result["fact_ids"]) - result["created"] :] if result["created"] else []
    return {
        **result,
        "fact_identities": result["fact_ids"],
        "created_fact_identities": new,
        "reconciled": 0,
        "trust": trust.block() if trust is not None else TRUST_NOTHING,
        "trust_events": trust.events if trust is not None else [],
    }


def _generation(character: Character, segment: HistorySegment) -> int:
    # Read before the model is asked and again before the write: a forget in between wins.
    return subject_forget_generation(character_id=character.pk, subject_key=segment.subject.key)


def _single(*, character: Character, segment: HistorySegment, language: str | None) -> dict[str, Any]:
    generation = _generation(character, segment)
    try:
        facts = _extract(character=character, segment=segment, language=language)
    except ScopedExtractionFailed as exc:
        logger.warning("scoped_history %s: extraction failed", character.name)
        raise HistoryExtractionFailed from exc
    overtaken = _generation(character, segment) != generation
    inputs = [segment.trust_input]
    outcomes = speaker_trust_resolve(inputs=inputs)
    result = _apply(
        character=character,
        segment=segment,
        facts=facts,
        language=language,
        stale=overtaken,
        trust=outcomes[0],
    )
    speaker_trust_record(inputs=inputs, outcomes=outcomes)  # the last write of the request
    logger.info("scoped_history %s: %d created", character.name, result["created"])
    return {"status": "processed", **result, "trust": outcomes[0].block()}


def _batch(*, character: Character, segments: list[HistorySegment], language: str | None) -> dict[str, Any]:
    # One extraction call for the whole batch; a segment the model skipped is reported failed at its
    # position and only it is retried. A forget between the call and a segment's write drops that write.
    inputs = [s.trust_input for s in segments]
    outcomes = speaker_trust_resolve(inputs=inputs)  # stamped from the ledger as the request found it
    generations = [_generation(character, segment) for segment in segments]
    try:
        extracted = _extract_batch(character=character, segments=segments, language=language)
    except ScopedExtractionFailed as exc:
        logger.warning("scoped_history %s: batch extraction failed", character.name)
        raise HistoryExtractionFailed from exc
    results = []
    for index, (segment, answered, generation) in enumerate(
        zip(segments, extracted, generations, strict=True)
    ):
        if answered is None:
            failed = {"subject": segment.subject.as_dict(), "created": 0, "dropped": 0, "fact_ids": []}
            results.append({**_batch_fields(failed), "status": "failed"})
            inputs[index], outcomes[index] = None, TrustOutcome()  # counted when its retry succeeds
            continue
        overtaken = _generation(character, segment) != generation
        applied = _apply(
            character=character,
            segment=segment,
            facts=answered,
            language=language,
            stale=overtaken,
            trust=outcomes[index],
        )
        results.append({**_batch_fields(applied), "status": "ok"})
    speaker_trust_record(inputs=inputs, outcomes=outcomes)
    for result, outcome in zip(results, outcomes, strict=True):
        if result["status"] == "ok":
            result.update(trust=outcome.block(), trust_events=outcome.events)
    failed_count = sum(r["status"] == "failed" for r in results)
    logger.info("scoped_history %s: %d segments, %d failed", character.name, len(results), failed_count)
    return {"status": "processed", "segments": results, "trust": outcomes_combined(outcomes)}


def _duplicate(answer: dict[str, Any]) -> dict[str, Any]:
    """A finished key's answer again: nothing created this time, and a null trust block."""
    again = {**answer, "duplicate": True, "created": 0, "trust": None}
    if "segments" in answer:
        again.pop("created")
        again["segments"] = [
            {**s, "created": 0, "created_fact_identities": [], "trust": None} for s in answer["segments"]
        ]
    return again


def _keyed(*, character: Character, request: HistoryRequest, write_key: WriteKey) -> dict[str, Any]:
    segments, language = request.segments, request.language
    row = scoped_write_key_begin(
        character_id=character.pk,
        key=write_key.key,
        fingerprint=_fingerprint(request, write_key),
        subject_keys=[s.subject.key for s in segments],
    )
    if row.status == row.Status.DONE and row.answer is not None:
        return _duplicate(row.answer)
    if row.generated is None:
        try:  # a keyed batch succeeds or fails as a whole: a skipped segment fails it, nothing journalled
            if request.batched:
                extracted = _extract_batch(character=character, segments=segments, language=language)
                if any(facts is None for facts in extracted):
                    raise ScopedExtractionFailed("the model skipped a segment")
                generated = [facts or [] for facts in extracted]
            else:
                generated = [_extract(character=character, segment=segments[0], language=language)]
        except ScopedExtractionFailed as exc:
            raise HistoryExtractionFailed from exc
        scoped_write_key_journal(
            row=row,
            generated=[[asdict(f) for f in facts] for facts in generated],
            trust=[s.trust_input.as_dict() if s.trust_input else None for s in segments],
        )
    # The journalled trust write is replayed while the key is pending (events count once).
    inputs = (
        [TrustInput.from_dict(t) if t else None for t in row.trust]
        if row.trust is not None
        else [s.trust_input for s in segments]
    )
    outcomes = speaker_trust_resolve(inputs=inputs)
    results = [
        _apply(
            character=character,
            segment=segment,
            facts=[ScopedFact(**item) for item in raw],
            language=language,
            stale=scoped_write_is_stale(
                character_id=character.pk,
                subject_key=segment.subject.key,
                epoch=write_key.epochs[segment.subject.key],
            ),
            trust=outcome,
        )
        for segment, raw, outcome in zip(segments, row.generated or [], outcomes, strict=True)
    ]
    speaker_trust_record(inputs=inputs, outcomes=outcomes)
    answer: dict[str, Any]
    if request.batched:
        answer = {
            "status": "processed",
            "segments": [
                {**_batch_fields(r, o), "status": "ok"} for r, o in zip(results, outcomes, strict=True)
            ],
            "trust": outcomes_combined(outcomes),
        }
    else:
        answer = {"status": "processed", **results[0], "trust": outcomes[0].block()}
    if any(o.persisted is False for o in outcomes):
        return answer  # the key stays pending: the same request replays the trust write
    scoped_write_key_finish(row=row, answer=answer)
    return answer
