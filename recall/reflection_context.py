"""The reflection sections of ``/new_dialog`` (reference §5.1): pending, active confirmed, and past.

Pending and active confirmed reflections share one 2000-token pool, best score first; an entry that
would overflow it is dropped with every later one. A confirmed reflection is *past* when its scope is
``past``, or it is a ``state`` anchored more than 7 days ago, or an ``episode`` more than 3 days ago
(anchor: event end, else event start, else creation); past ones go to the "older memories" block.
The persona sections (next issue) come before these, under the same header.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from nekomem.characters.models import Character
from nekomem.locale import master_display_name
from nekomem.textproc import count_tokens
from reflections.models import Reflection
from reflections.selectors import ACTIVE_STATUSES, reflections_scored

REFLECTION_POOL_TOKENS = 2000
PAST_AFTER = {"state": timedelta(days=7), "episode": timedelta(days=3)}

STRINGS: dict[str, dict[str, str]] = {
    "zh": {
        "header": "\n======{name}的长期记忆======\n",
        "pending": "### {name}最近的印象（还不太确定）",
        "confirmed": "### {name}比较确定的印象",
        "past_open": "======以下为较久远的记忆======",
        "past_note": "（这些只是背景，除非{master}主动提起，否则不要主动提及）",
        "past_close": "======以上为较久远的记忆======",
        "now": "刚刚",
        "days": "{n}天前",
        "weeks": "{n}周前",
        "months": "{n}个月前",
    },
    "en": {
        "header": "\n======{name}'s long-term memory======\n",
        "pending": "### {name}'s recent impressions (not yet sure)",
        "confirmed": "### {name}'s fairly certain impressions",
        "past_open": "======Older memories below======",
        "past_note": "(Background only: do not bring these up unless {master} does.)",
        "past_close": "======Older memories above======",
        "now": "just now",
        "days": "{n} days ago",
        "weeks": "{n} weeks ago",
        "months": "{n} months ago",
    },
}


@dataclass(frozen=True)
class _Row:
    text: str
    status: str
    scope: str | None
    anchor: datetime
    score: float


def _text(language: str, key: str, **values: object) -> str:
    return STRINGS.get(language, STRINGS["en"])[key].format(**values)


def time_label(language: str, anchor: datetime, now: datetime) -> str:
    days = max(0, (now - anchor).days)
    if days < 1:
        return _text(language, "now")
    if days < 7:
        return _text(language, "days", n=days)
    if days < 30:
        return _text(language, "weeks", n=days // 7)
    return _text(language, "months", n=days // 30)


def is_past(row: _Row, now: datetime) -> bool:
    if row.scope == "past":
        return True
    limit = PAST_AFTER.get(row.scope or "")
    return limit is not None and now - row.anchor > limit


def _rows(character_id: int, now: datetime) -> list[_Row]:
    scored = reflections_scored(
        character_id=character_id,
        now=now,
        statuses=ACTIVE_STATUSES,
        fields=("text", "status", "temporal_scope"),
        suppress=False,
    )
    return [
        _Row(
            text=text,
            status=status,
            scope=scope,
            anchor=now - timedelta(seconds=row.anchor_age_seconds or 0.0),
            score=row.score,
        )
        for row in scored
        for text, status, scope in [row.values]
        if text and text.strip()
    ]


def _budgeted(rows: list[_Row]) -> list[_Row]:
    kept, spent = [], 0
    for row in sorted(rows, key=lambda r: -r.score):
        spent += count_tokens(row.text)
        if spent > REFLECTION_POOL_TOKENS:
            break
        kept.append(row)
    return kept


def reflection_context_sections(*, character: Character, language: str, now: datetime) -> list[str]:
    """The three sections (those that have entries), each a block of lines."""
    rows = _rows(character.pk, now)
    pending = [r for r in rows if r.status == Reflection.Status.PENDING]
    confirmed = [r for r in rows if r.status == Reflection.Status.CONFIRMED]
    past = sorted((r for r in confirmed if is_past(r, now)), key=lambda r: r.anchor, reverse=True)
    active = [r for r in confirmed if r.score > 0 and not is_past(r, now)]
    kept = _budgeted(pending + active)
    name, master = character.name, master_display_name(character.master_name, language)
    sections = []
    for key, status in (("pending", Reflection.Status.PENDING), ("confirmed", Reflection.Status.CONFIRMED)):
        lines = [f"- {r.text}" for r in kept if r.status == status]
        if lines:
            sections.append("\n".join([_text(language, key, name=name), *lines]))
    if past:
        sections.append(
            "\n".join(
                [
                    _text(language, "past_open"),
                    _text(language, "past_note", master=master),
                    *(f"- [{time_label(language, r.anchor, now)}] {r.text}" for r in past),
                    _text(language, "past_close"),
                ]
            )
        )
    return sections


def reflection_context_lines(*, character: Character, language: str, now: datetime) -> list[str]:
    """The long-term memory block as one entry of the context's line list (empty without reflections)."""
    sections = reflection_context_sections(character=character, language=language, now=now)
    if not sections:
        return []
    return [_text(language, "header", name=character.name) + "\n\n".join(sections)]
