"""The character's durable prompt locale (reference §1.7): which language its memory speaks.

An explicit supported ``language`` on a request (the conversation routes, ``/new_dialog``,
``/query_memory``, the language page's PUT) is remembered on the character in *arrival order*: each
request takes a stamp when it arrives, and the stored choice is replaced only by a choice with a newer
stamp, compared inside the UPDATE itself. A request that arrived earlier and finishes later (it waited
for the settle lock, say) therefore never overrides a newer choice. ``render_language`` renders only.

``character_language`` is the one resolution every renderer and every background job of a character
uses: request ``language`` → stored locale → ``render_language`` → the server default.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from django.db.models import BigIntegerField, Case, CharField, F, Value, When

from nekomem.characters.models import Character
from nekomem.language.codes import supported_language
from nekomem.language.resolution import resolve_language

_stamp_lock = threading.Lock()
_last_stamp = 0


def language_arrival_stamp() -> int:
    """A stamp for a request that has just arrived: nanoseconds of wall time, strictly increasing
    within the process (two requests of one process never share a stamp)."""
    global _last_stamp
    with _stamp_lock:
        stamp = max(time.time_ns(), _last_stamp + 1)
        _last_stamp = stamp
        return stamp


def stored_language(character: Character) -> str | None:
    """The character's remembered locale as one of the supported codes, or None when none is stored
    (or what is stored is unreadable: an older row may hold a code we do not support)."""
    return supported_language(character.language or None)


def character_language(
    character: Character | None, *, request_language: str | None = None, render_language: str | None = None
) -> str:
    """The language to render and prompt in for this character: the request's explicit supported
    ``language``, else the stored locale, else ``render_language``, else the server default."""
    stored = stored_language(character) if character is not None else None
    return resolve_language(supported_language(request_language), stored, supported_language(render_language))


def language_choice_update(*, language: str | None, order: int) -> dict[str, Any]:
    """The UPDATE assignments that store ``language`` over an older choice only (empty when the
    language is not an explicit supported one): for a caller's own UPDATE of the character row."""
    code = supported_language(language)
    if code is None:
        return {}
    newer = When(language_order__lt=order, then=Value(order, output_field=BigIntegerField()))
    return {
        "language": Case(
            When(language_order__lt=order, then=Value(code)), default=F("language"), output_field=CharField()
        ),
        "language_order": Case(newer, default=F("language_order"), output_field=BigIntegerField()),
    }


def language_choice_sql(
    *, language: str | None, order: int, table: str, language_column: str, order_column: str
) -> tuple[list[str], list[Any]]:
    """``language_choice_update`` for a hand-built UPDATE: SET assignments (quoted names given) and
    their parameters. Every SET expression reads the row as it was, so both compare the old stamp."""
    code = supported_language(language)
    if code is None:
        return [], []
    newer = f"{table}.{order_column} < %s"
    return (
        [
            f"{language_column} = CASE WHEN {newer} THEN %s ELSE {table}.{language_column} END",
            f"{order_column} = CASE WHEN {newer} THEN %s ELSE {table}.{order_column} END",
        ],
        [order, code, order, order],
    )
