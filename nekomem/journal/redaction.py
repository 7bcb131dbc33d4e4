"""Forgetting reaches the journal too: the texts a user had forgotten are blanked in the stored events
and outbox payloads of the character, so a replay or an export cannot bring them back.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from django.db.models import Q, TextField
from django.db.models.functions import Cast

from nekomem.journal.models import Event, OutboxOp

# A forgotten text this long is blanked wherever it is quoted (a merge's survivor, a queued correction,
# a seed); a shorter one only where a string is exactly it, or inside the forgotten row's own events:
# a word of two characters is inside many texts that were never about it.
REDACT_QUOTED_MIN = 8
# More texts than this are looked for in every event of the character (one scan) rather than by a
# filter per text.
REDACT_FILTER_MAX = 200


def _stored_forms(text: str) -> set[str]:
    """How a string shows inside a JSON payload as the database stores it: escaped to ASCII (Django's
    encoder, on SQLite) or as UTF-8 (PostgreSQL's ``jsonb`` text)."""
    return {json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}


def events_redact(*, character_id: int, texts: Collection[str], match: Q | None = None) -> int:
    """Blank every copy of ``texts`` (a forgotten row's) in the character's events, seeds included: in the
    events that ``match`` (the row's own versions) every string that holds one; in every other event
    every string that holds one of at least ``REDACT_QUOTED_MIN`` characters or equals a shorter one.
    The events stay, so replay and the applied sentinel are unchanged and the history shows that the
    row was there, never what it said. Runs in the forgetting transaction; returns how many events
    were rewritten."""
    wanted = sorted({text for text in texts if text})
    if not wanted:
        return 0
    own = match if match is not None else Q(pk__in=[])
    events = Event.objects.filter(character_id=character_id)
    if len(wanted) <= REDACT_FILTER_MAX:
        quoting = Q()
        for text in wanted:
            for form in _stored_forms(text):
                quoting |= Q(payload_text__contains=form)
        events = events.annotate(payload_text=Cast("payload", TextField())).filter(own | quoting)
    mine = set(Event.objects.filter(own, character_id=character_id).values_list("pk", flat=True))
    long_texts = [text for text in wanted if len(text) >= REDACT_QUOTED_MIN]
    short_texts = {text for text in wanted if len(text) < REDACT_QUOTED_MIN}
    rewritten = 0
    for pk, payload in events.values_list("pk", "payload"):
        if pk in mine:
            blanked = _blanked(payload, wanted)
        else:
            blanked = _blanked(payload, long_texts, exact=short_texts)
        if blanked != payload:
            Event.objects.filter(pk=pk).update(payload=blanked)
            rewritten += 1
    return rewritten


def _blanked(value: Any, texts: list[str], *, exact: Collection[str] = ()) -> Any:
    if isinstance(value, str):
        return "" if value in exact or any(text in value for text in texts) else value
    if isinstance(value, list):
        return [_blanked(item, texts, exact=exact) for item in value]
    if isinstance(value, dict):
        return {key: _blanked(item, texts, exact=exact) for key, item in value.items()}
    return value


def outbox_ops_redact(*, character_id: int, texts: Collection[str]) -> int:
    """Blank ``texts`` in the character's outbox ops (a turn's op carries its messages): a forgotten turn
    is neither kept there nor extracted later. Returns how many ops were rewritten."""
    wanted = [text for text in texts if text]
    if not wanted:
        return 0
    rewritten = 0
    for pk, payload in OutboxOp.objects.filter(character_id=character_id).values_list("pk", "payload"):
        blanked = _blanked(payload, wanted)
        if blanked != payload:
            OutboxOp.objects.filter(pk=pk).update(payload=blanked)
            rewritten += 1
    return rewritten
