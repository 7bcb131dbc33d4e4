"""The one request parser of every group-chat route (reference §1.6): the JSON body, the answers, the
route decorators and the fields the routes share. A request the original refuses is answered 422 with
its plain ``{"detail": …}``; every route parses before it writes anything."""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from facts.models import Fact
from facts.services import ScopedFact
from groupchat.identity.services import LinkLimit, UnknownIdentity
from groupchat.identity.trust import TRUST_FIELDS, TrustFieldError, normalize_account_id, trust_input_parse
from groupchat.services import HistoryRequest, HistorySegment, WriteKey
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
HISTORY_MAX = 200
SEGMENTS_MAX = 8
IDEMPOTENCY_KEY = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
LABEL_MAX = 64
# A batch carries its trust fields per segment: top-level ones are the single shape's.
SINGLE_FIELDS = ("input_history", "subject", "speaker_label", "speaker_id", "display_name", *TRUST_FIELDS)


class Unprocessable(ValueError):
    """A request the original refuses with 422."""


def ok(body: dict[str, Any]) -> JsonResponse:
    return JsonResponse(body, json_dumps_params={"ensure_ascii": False})


def detail(message: str, status: int = 422, **more: Any) -> JsonResponse:
    return JsonResponse({"detail": message, **more}, status=status, json_dumps_params={"ensure_ascii": False})


def request_body(request: HttpRequest) -> dict[str, Any]:
    try:
        body = json.loads(request.body or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise Unprocessable(f"body is not valid JSON: {exc}") from exc
    if not isinstance(body, dict):
        raise Unprocessable("body must be a JSON object")
    return body


def _refuses_unprocessable(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @functools.wraps(view)
    def wrapper(request: HttpRequest, name: str) -> HttpResponse:
        try:
            return view(request, name)
        except Unprocessable as exc:
            return detail(str(exc))

    return wrapper


def scoped_post_route(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A scoped POST route: server to server (no CSRF token), a valid character name, 422 on refusal."""
    return csrf_exempt(require_POST(validated_name(_refuses_unprocessable(view))))


def scoped_get_route(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    return require_GET(validated_name(_refuses_unprocessable(view)))


def ledger_route(view: Callable[[HttpRequest], HttpResponse]) -> Callable[[HttpRequest], HttpResponse]:
    """An identity or trust route (no character): 422 for a bad request, 404 for an unknown id, 409
    beyond the link limit, 503 (persisted false) when the ledger cannot be written."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest) -> HttpResponse:
        try:
            return view(request)
        except Unprocessable as exc:
            return detail(str(exc))
        except UnknownIdentity as exc:
            return detail(str(exc), status=404, persisted=None)
        except LinkLimit as exc:
            return detail(str(exc), status=409, persisted=None)
        except DatabaseError:
            logger.exception("identity: the ledger write failed")
            return detail("the ledger could not be written; retry", status=503, persisted=False)

    return wrapped


def account_id_field(raw: Any, name: str = "account_id") -> str:
    account_id = normalize_account_id(raw)
    if account_id is None:
        raise Unprocessable(f"{name} must be <platform>:<actor> (a stable id, at most 96 characters)")
    return account_id


def entity_id_field(raw: Any, name: str = "entity_id") -> str:
    if not isinstance(raw, str) or not 1 <= len(raw.strip()) <= 40:
        raise Unprocessable(f"{name} must be an entity id")
    return raw.strip()


def subject_field(raw: Any) -> Subject:
    try:
        return subject_parse(raw)
    except SubjectError as exc:
        raise Unprocessable(str(exc)) from exc


def subjects_field(raw: Any) -> list[Subject]:
    if not isinstance(raw, list) or not raw or len(raw) > SUBJECTS_MAX:
        raise Unprocessable(f"subjects must be a list of 1..{SUBJECTS_MAX} subjects")
    return [subject_field(item) for item in raw]


def short_text_field(raw: Any, name: str, limit: int) -> str | None:
    """An optional short string, trimmed; blank reads as absent."""
    if raw is None:
        return None
    if not isinstance(raw, str) or len(raw.strip()) > limit:
        raise Unprocessable(f"{name} must be a string of at most {limit} characters")
    return raw.strip() or None


def display_name_field(raw: Any) -> str | None:
    return short_text_field(raw, "display_name", DISPLAY_NAME_MAX)


def is_count(raw: Any) -> bool:
    """An integer >= 0 (JSON's true/false are not numbers here)."""
    return not isinstance(raw, bool) and isinstance(raw, int) and raw >= 0


def language_field(raw: Any) -> str | None:
    if raw is not None and not isinstance(raw, str):
        raise Unprocessable("language must be a string")
    return raw


def _importance(raw: Any) -> int:
    if raw is None:
        return 5
    if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= 10:
        raise Unprocessable("importance must be an integer 1..10")
    return raw


def facts_field(raw: Any) -> list[ScopedFact]:
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


def platform_field(raw: str | None) -> str:
    if not raw or ":" in raw or len(raw) > PLATFORM_MAX:
        raise Unprocessable(f"platform is required: non-empty, no ':', at most {PLATFORM_MAX} characters")
    return raw


def epoch_keys_field(keys: list[str]) -> list[str]:
    if len(keys) > EPOCH_KEYS_MAX:
        raise Unprocessable(f"at most {EPOCH_KEYS_MAX} subject keys")
    for key in keys:
        if not 1 <= len(key) <= EPOCH_KEY_MAX or not key.isprintable():
            raise Unprocessable(f"a subject key must be 1..{EPOCH_KEY_MAX} printable characters")
    return keys


def _messages(raw: Any) -> list[dict[str, Any]]:
    try:
        messages = parse_history(raw)
    except HistoryParseError as exc:
        raise Unprocessable(str(exc)) from exc
    if not 1 <= len(messages) <= HISTORY_MAX:
        raise Unprocessable(f"input_history must hold 1..{HISTORY_MAX} messages")
    return messages


@dataclass(frozen=True)
class _ParsedSegment:
    segment: HistorySegment
    messages: int


def _segment(raw: Any, *, label_required: bool) -> _ParsedSegment:
    if not isinstance(raw, dict):
        raise Unprocessable("a segment must be an object")
    subject = subject_field(raw.get("subject"))
    messages = _messages(raw.get("input_history"))
    speaker_label = short_text_field(raw.get("speaker_label"), "speaker_label", LABEL_MAX)
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
    segment = HistorySegment(
        subject=subject,
        history=raw.get("input_history") or "",
        lines=lines,
        speaker_label=speaker_label,
        speaker_id=speaker_id,
        display_name=display_name_field(raw.get("display_name")),
        trust=trust,
        trust_input=trust_input,
    )
    return _ParsedSegment(segment=segment, messages=len(messages))


def _segments(raw: Any) -> list[HistorySegment]:
    if not isinstance(raw, list) or not 1 <= len(raw) <= SEGMENTS_MAX:
        raise Unprocessable(f"segments must be a list of 1..{SEGMENTS_MAX} segments")
    parsed = [_segment(item, label_required=True) for item in raw]
    if sum(p.messages for p in parsed) > HISTORY_MAX:
        raise Unprocessable(f"the segments hold more than {HISTORY_MAX} messages in total")
    return [p.segment for p in parsed]


def _write_key(body: dict[str, Any], segments: list[HistorySegment]) -> WriteKey | None:
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
        if not is_count(epochs.get(segment.subject.key)):
            raise Unprocessable(f"subject_epochs needs an integer >= 0 for {segment.subject.key}")
    return WriteKey(key=key, epochs={s.subject.key: int(epochs[s.subject.key]) for s in segments})


def history_request_parse(body: dict[str, Any]) -> HistoryRequest:
    """A ``scoped_history`` request: the single shape or a batch of ``segments``, optionally keyed."""
    language = language_field(body.get("language"))
    batched = "segments" in body
    if batched:
        if any(key in body for key in SINGLE_FIELDS):
            raise Unprocessable("segments cannot be mixed with the single shape's fields")
        segments = _segments(body["segments"])
    else:
        segments = [_segment(body, label_required=False).segment]
    return HistoryRequest(
        segments=segments, language=language, batched=batched, write_key=_write_key(body, segments)
    )
