"""The group-chat ("scoped") routes (reference §1.6). Errors are the original's plain ``{"detail": …}``."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from facts.models import Fact
from facts.services import (
    BatchSegment,
    ScopedExtractionFailed,
    ScopedFact,
    facts_scoped_extract,
    facts_scoped_extract_batch,
    facts_scoped_store,
)
from groupchat.identity.services import speaker_trust_record, speaker_trust_resolve
from groupchat.identity.trust import (
    TRUST_FIELDS,
    TrustFieldError,
    TrustInput,
    TrustOutcome,
    outcomes_combined,
    trust_input_parse,
)
from groupchat.selectors import forget_epochs_read, scoped_subjects_list
from groupchat.services import (
    ForgetEpochScope,
    KeyReused,
    scoped_context_render,
    scoped_forget,
    scoped_mentions_record,
    scoped_write_is_stale,
    scoped_write_key_begin,
    scoped_write_key_finish,
    scoped_write_key_journal,
    subject_forget_generation,
    subject_record_touch,
)
from nekomem.characters.models import Character
from nekomem.characters.selectors import character_get
from nekomem.characters.services import character_get_or_create
from nekomem.http import HistoryParseError, validated_name
from nekomem.subjects import SUBJECTS_MAX, Subject, SubjectError, subject_parse
from recent.selectors import history_message_text, parse_history

logger = logging.getLogger(__name__)

FACTS_MAX = 32
FACT_TEXT_MAX = 2000
DISPLAY_NAME_MAX = 64
PLATFORM_MAX = 64
EPOCH_KEYS_MAX = 64
EPOCH_KEY_MAX = 512


class Unprocessable(ValueError):
    """A request the original refuses with 422."""


def _detail(message: str, status: int = 422) -> JsonResponse:
    return JsonResponse({"detail": message}, status=status, json_dumps_params={"ensure_ascii": False})


def _ok(body: dict[str, Any]) -> JsonResponse:
    return JsonResponse(body, json_dumps_params={"ensure_ascii": False})


def _body(request: HttpRequest) -> dict[str, Any]:
    try:
        body = json.loads(request.body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise Unprocessable(f"body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise Unprocessable("body must be a JSON object")
    return body


def _refuses_unprocessable(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Answer a request the view's parsing refuses with the original's 422 ``{"detail": …}``.

    Only this module's parsers raise ``Unprocessable``, and each route parses before it writes anything.
    """

    @functools.wraps(view)
    def wrapper(request: HttpRequest, name: str) -> HttpResponse:
        try:
            return view(request, name)
        except Unprocessable as exc:
            return _detail(str(exc))

    return wrapper


def _post_route(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A scoped POST route: server to server (no CSRF token), a valid character name, 422 on refusal."""
    return csrf_exempt(require_POST(validated_name(_refuses_unprocessable(view))))


def _get_route(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    return require_GET(validated_name(_refuses_unprocessable(view)))


def _subject(raw: Any) -> Subject:
    try:
        return subject_parse(raw)
    except SubjectError as exc:
        raise Unprocessable(str(exc)) from exc


def _subjects(raw: Any) -> list[Subject]:
    if not isinstance(raw, list) or not raw or len(raw) > SUBJECTS_MAX:
        raise Unprocessable(f"subjects must be a list of 1..{SUBJECTS_MAX} subjects")
    return [_subject(item) for item in raw]


def _short_text(raw: Any, name: str, limit: int) -> str | None:
    """An optional short string, trimmed; blank reads as absent."""
    if raw is None:
        return None
    if not isinstance(raw, str) or len(raw.strip()) > limit:
        raise Unprocessable(f"{name} must be a string of at most {limit} characters")
    return raw.strip() or None


def _display_name(raw: Any) -> str | None:
    return _short_text(raw, "display_name", DISPLAY_NAME_MAX)


def _is_count(raw: Any) -> bool:
    """An integer >= 0 (JSON's true/false are not numbers here)."""
    return not isinstance(raw, bool) and isinstance(raw, int) and raw >= 0


def _language(raw: Any) -> str | None:
    if raw is not None and not isinstance(raw, str):
        raise Unprocessable("language must be a string")
    return raw


def _importance(raw: Any) -> int:
    if raw is None:
        return 5
    if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= 10:
        raise Unprocessable("importance must be an integer 1..10")
    return raw


def _facts(raw: Any) -> list[ScopedFact]:
    if not isinstance(raw, list) or not raw or len(raw) > FACTS_MAX:
        raise Unprocessable(f"facts must be a list of 1..{FACTS_MAX} facts")
    facts = []
    for item in raw:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise Unprocessable("each fact needs a text")
        text = item["text"].strip()
        if not text or len(text) > FACT_TEXT_MAX:
            raise Unprocessable(f"a fact's text must be 1..{FACT_TEXT_MAX} characters after trimming")
        source = item.get("source") or Fact.Source.USER_OBSERVATION
        if source not in Fact.Source.values:
            raise Unprocessable(f"source must be one of {', '.join(Fact.Source.values)}")
        facts.append(ScopedFact(text=text, importance=_importance(item.get("importance")), source=source))
    return facts


@_post_route
def scoped_facts(request: HttpRequest, name: str) -> HttpResponse:
    body = _body(request)
    subject = _subject(body.get("subject"))
    facts = _facts(body.get("facts"))
    display_name = _display_name(body.get("display_name"))
    language = _language(body.get("language"))
    character = character_get_or_create(name=name)
    stored = facts_scoped_store(character_id=character.pk, subject=subject, facts=facts)
    subject_record_touch(
        character_id=character.pk, subject=subject, display_name=display_name, language=language
    )
    logger.info("scoped_facts %s: %d created of %d", name, stored.created, len(facts))
    return _ok(
        {
            "status": "stored",
            "subject": subject.as_dict(),
            "created": stored.created,
            "fact_ids": stored.fact_ids,
        }
    )


@_post_route
def scoped_context(request: HttpRequest, name: str) -> HttpResponse:
    body = _body(request)
    subjects = _subjects(body.get("subjects"))
    language = _language(body.get("language"))
    text = scoped_context_render(character=character_get(name=name), subjects=subjects, language=language)
    return HttpResponse(text, content_type="text/plain; charset=utf-8")


@_post_route
def scoped_mentions(request: HttpRequest, name: str) -> HttpResponse:
    body = _body(request)
    subjects = _subjects(body.get("subjects"))
    text = body.get("response_text")
    if not isinstance(text, str):
        raise Unprocessable("response_text must be a string")
    character = character_get(name=name)
    if character is None or not text.strip():
        return _ok({"status": "skipped"})
    recorded = scoped_mentions_record(character_id=character.pk, response_text=text, subjects=subjects)
    return _ok({"status": "recorded" if recorded else "skipped"})


@_post_route
def scoped_forget_view(request: HttpRequest, name: str) -> HttpResponse:
    body = _body(request)
    subject = _subject(body.get("subject"))
    epoch = body.get("forget_epoch")
    if epoch is not None and not _is_count(epoch):
        raise Unprocessable("forget_epoch must be an integer >= 0")
    character = character_get_or_create(name=name)
    try:
        forgotten = scoped_forget(character_id=character.pk, subject=subject, forget_epoch=epoch)
    except ForgetEpochScope as exc:
        return _detail(str(exc))
    except Exception:
        logger.exception("scoped_forget %s failed", name)
        return _detail("scoped forget failed; retry is safe", status=500)
    answer: dict[str, Any] = {
        "status": "forgotten",
        "subject": subject.as_dict(),
        "forgotten_subjects": forgotten.forgotten_subjects,
    }
    if forgotten.duplicate:
        answer["duplicate"] = True
    else:
        answer.update(forgotten.counts)
    logger.info("scoped_forget %s: %s", name, forgotten.counts)
    return _ok(answer)


@_get_route
def scoped_subjects(request: HttpRequest, name: str) -> HttpResponse:
    platform = request.GET.get("platform")
    if not platform or ":" in platform or len(platform) > PLATFORM_MAX:
        raise Unprocessable(f"platform is required: non-empty, no ':', at most {PLATFORM_MAX} characters")
    character = character_get(name=name)
    if character is None:
        return _ok({"subjects": []})
    return _ok({"subjects": scoped_subjects_list(character_id=character.pk, platform=platform)})


@_get_route
def forget_epochs(request: HttpRequest, name: str) -> HttpResponse:
    keys = request.GET.getlist("subject")
    if len(keys) > EPOCH_KEYS_MAX:
        raise Unprocessable(f"at most {EPOCH_KEYS_MAX} subject keys")
    for key in keys:
        if not 1 <= len(key) <= EPOCH_KEY_MAX or not key.isprintable():
            raise Unprocessable(f"a subject key must be 1..{EPOCH_KEY_MAX} printable characters")
    character = character_get(name=name)
    try:
        epochs = forget_epochs_read(character_id=character.pk if character else None, subject_keys=keys)
    except Exception:
        # Never answer "no fence" when the tombstones cannot be read.
        logger.exception("forget_epochs %s: tombstones unreadable", name)
        return _detail("forget epochs unavailable; retry later", status=503)
    return _ok({"epochs": epochs})


HISTORY_MAX = 200
SEGMENTS_MAX = 8
IDEMPOTENCY_KEY = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
LABEL_MAX = 64
# The trust block of a segment with nothing about trust to write (the wire client reads it as accepted).
TRUST_NOTHING = TrustOutcome().block()
# A batch carries its trust fields per segment: top-level ones are the single shape's.
SINGLE_FIELDS = ("input_history", "subject", "speaker_label", "speaker_id", "display_name", *TRUST_FIELDS)


def _label(raw: Any, name: str) -> str | None:
    return _short_text(raw, name, LABEL_MAX)


def _messages(raw: Any) -> list[dict[str, Any]]:
    try:
        messages = parse_history(raw)
    except HistoryParseError as exc:
        raise Unprocessable(str(exc)) from exc
    if not 1 <= len(messages) <= HISTORY_MAX:
        raise Unprocessable(f"input_history must hold 1..{HISTORY_MAX} messages")
    return messages


@dataclass(frozen=True)
class _Segment:
    subject: Subject
    history: str
    lines: list[str]
    messages: int
    speaker_label: str | None
    speaker_id: str | None
    display_name: str | None
    trust: float | None
    trust_input: TrustInput | None = None


def _segment(raw: Any, *, label_required: bool) -> _Segment:
    if not isinstance(raw, dict):
        raise Unprocessable("a segment must be an object")
    subject = _subject(raw.get("subject"))
    messages = _messages(raw.get("input_history"))
    speaker_label = _label(raw.get("speaker_label"), "speaker_label")
    if label_required and speaker_label is None:
        raise Unprocessable("every segment needs a speaker_label")
    speaker_id = raw.get("speaker_id")
    if speaker_id is not None and not isinstance(speaker_id, str):
        raise Unprocessable("speaker_id must be a string")
    trust = raw.get("speaker_trust")
    if trust is not None and (
        isinstance(trust, bool) or not isinstance(trust, int | float) or not 0 <= trust <= 1
    ):
        raise Unprocessable("speaker_trust must be a number 0..1")
    try:
        trust_input = trust_input_parse(raw)
    except TrustFieldError as exc:
        raise Unprocessable(str(exc)) from exc
    lines = [
        text for m in messages if m["type"] == "human" for text in [history_message_text(m)] if text.strip()
    ]
    return _Segment(
        subject=subject,
        history=raw.get("input_history") or "",
        lines=lines,
        messages=len(messages),
        speaker_label=speaker_label,
        speaker_id=speaker_id,
        display_name=_display_name(raw.get("display_name")),
        trust=trust,
        trust_input=trust_input,
    )


def _segments(raw: Any) -> list[_Segment]:
    if not isinstance(raw, list) or not 1 <= len(raw) <= SEGMENTS_MAX:
        raise Unprocessable(f"segments must be a list of 1..{SEGMENTS_MAX} segments")
    segments = [_segment(item, label_required=True) for item in raw]
    if sum(s.messages for s in segments) > HISTORY_MAX:
        raise Unprocessable(f"the segments hold more than {HISTORY_MAX} messages in total")
    return segments


def _extract(*, character: Character, segment: _Segment, language: str | None) -> list[ScopedFact]:
    """One segment's extraction; raises ScopedExtractionFailed."""
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
    *, character: Character, segments: list[_Segment], language: str | None
) -> list[list[ScopedFact] | None]:
    """One LLM call over the whole batch (§1.6); ``None`` where the model skipped a segment. Raises
    ScopedExtractionFailed when the call fails."""
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
    segment: _Segment,
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


@dataclass(frozen=True)
class _Keyed:
    key: str
    epochs: dict[str, int]
    fingerprint: str


def _server(segment: _Segment) -> bool:
    return segment.trust_input is not None and segment.trust_input.server


def _keyed(body: dict[str, Any], segments: list[_Segment], language: str | None) -> _Keyed | None:
    key = body.get("idempotency_key")
    if key is None:
        return None
    if not isinstance(key, str) or not IDEMPOTENCY_KEY.fullmatch(key):
        raise Unprocessable("idempotency_key must be 1..128 characters of [A-Za-z0-9_.:-]")
    if body.get("speaker_is_owner") or any(
        isinstance(s, dict) and s.get("speaker_is_owner") for s in body.get("segments") or []
    ):
        raise Unprocessable("speaker_is_owner cannot be sent with an idempotency_key")
    epochs = body.get("subject_epochs")
    if not isinstance(epochs, dict):
        raise Unprocessable("an idempotency_key needs subject_epochs")
    for segment in segments:
        if not segment.subject.default_scope:
            raise Unprocessable("keyed writes need the subjects' default scopes")
        epoch = epochs.get(segment.subject.key)
        if not _is_count(epoch):
            raise Unprocessable(f"subject_epochs needs an integer >= 0 for {segment.subject.key}")
    # Labels, display names and client_requested_at are not part of what the request means.
    chosen = {s.subject.key: int(epochs[s.subject.key]) for s in segments}
    meaning: dict[str, Any] = {
        "segments": [
            {
                "history": s.history,
                "subject": s.subject.as_dict(),
                "speaker_id": s.speaker_id,
                "trust": s.trust,
                # Server-derived trust inputs are part of the meaning (absent: the older fingerprint).
                **({"trust_input": s.trust_input.as_dict()} if s.trust_input and _server(s) else {}),
            }
            for s in segments
        ],
        "epochs": chosen,
        "language": language,
    }
    digest = hashlib.sha256(json.dumps(meaning, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return _Keyed(key=key, epochs=chosen, fingerprint=digest)


def _facts_of(raw: list[dict[str, Any]]) -> list[ScopedFact]:
    return [ScopedFact(**item) for item in raw]


def _keyed_history(
    *, character: Character, keyed: _Keyed, segments: list[_Segment], language: str | None, batched: bool
) -> HttpResponse:
    try:
        row = scoped_write_key_begin(
            character_id=character.pk,
            key=keyed.key,
            fingerprint=keyed.fingerprint,
            subject_keys=[s.subject.key for s in segments],
        )
    except KeyReused as exc:
        return _detail(str(exc))
    if row.status == row.Status.DONE and row.answer is not None:
        return _ok(_duplicate(row.answer))
    if row.generated is None:
        try:  # a keyed batch succeeds or fails as a whole: a skipped segment fails it, nothing journalled
            if batched:
                extracted = _extract_batch(character=character, segments=segments, language=language)
                if any(facts is None for facts in extracted):
                    raise ScopedExtractionFailed("the model skipped a segment")
                generated = [facts or [] for facts in extracted]
            else:
                generated = [_extract(character=character, segment=segments[0], language=language)]
        except ScopedExtractionFailed:
            return _detail("scoped fact extraction failed; retry later", status=502)
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
            facts=_facts_of(raw),
            language=language,
            stale=scoped_write_is_stale(
                character_id=character.pk,
                subject_key=segment.subject.key,
                epoch=keyed.epochs[segment.subject.key],
            ),
            trust=outcome,
        )
        for segment, raw, outcome in zip(segments, row.generated or [], outcomes, strict=True)
    ]
    speaker_trust_record(inputs=inputs, outcomes=outcomes)
    answer: dict[str, Any]
    if batched:
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
        return _ok(answer)  # the key stays pending: the same request replays the trust write
    scoped_write_key_finish(row=row, answer=answer)
    return _ok(answer)


def _generation(character: Character, segment: _Segment) -> int:
    # Read before the model is asked and again before the write: a forget in between wins.
    return subject_forget_generation(character_id=character.pk, subject_key=segment.subject.key)


def _duplicate(answer: dict[str, Any]) -> dict[str, Any]:
    """A finished key's answer again: nothing created this time, and a null trust block."""
    again = {**answer, "duplicate": True, "created": 0, "trust": None}
    if "segments" in answer:
        again.pop("created")
        again["segments"] = [
            {**s, "created": 0, "created_fact_identities": [], "trust": None} for s in answer["segments"]
        ]
    return again


@_post_route
def scoped_history(request: HttpRequest, name: str) -> HttpResponse:
    body = _body(request)
    language = _language(body.get("language"))
    batched = "segments" in body
    if batched:
        if any(key in body for key in SINGLE_FIELDS):
            raise Unprocessable("segments cannot be mixed with the single shape's fields")
        segments = _segments(body["segments"])
    else:
        segments = [_segment(body, label_required=False)]
    keyed = _keyed(body, segments, language)
    character = character_get_or_create(name=name)
    if keyed is not None:
        return _keyed_history(
            character=character, keyed=keyed, segments=segments, language=language, batched=batched
        )
    if not batched:
        generation = _generation(character, segments[0])
        try:
            facts = _extract(character=character, segment=segments[0], language=language)
        except ScopedExtractionFailed:
            logger.warning("scoped_history %s: extraction failed", name)
            return _detail("scoped fact extraction failed; retry later", status=502)
        overtaken = _generation(character, segments[0]) != generation
        inputs = [segments[0].trust_input]
        outcomes = speaker_trust_resolve(inputs=inputs)
        result = _apply(
            character=character,
            segment=segments[0],
            facts=facts,
            language=language,
            stale=overtaken,
            trust=outcomes[0],
        )
        speaker_trust_record(inputs=inputs, outcomes=outcomes)  # the last write of the request
        logger.info("scoped_history %s: %d created", name, result["created"])
        return _ok({"status": "processed", **result, "trust": outcomes[0].block()})
    # One extraction call for the whole batch; a segment the model skipped is reported failed at its
    # position and only it is retried. A forget between the call and a segment's write drops that write.
    inputs = [s.trust_input for s in segments]
    outcomes = speaker_trust_resolve(inputs=inputs)  # stamped from the ledger as the request found it
    generations = [_generation(character, segment) for segment in segments]
    try:
        extracted = _extract_batch(character=character, segments=segments, language=language)
    except ScopedExtractionFailed:
        logger.warning("scoped_history %s: batch extraction failed", name)
        return _detail("scoped fact extraction failed; retry later", status=502)
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
    logger.info("scoped_history %s: %d segments, %d failed", name, len(results), failed_count)
    return _ok({"status": "processed", "segments": results, "trust": outcomes_combined(outcomes)})
