"""The answer block (reference §1.8): the hits as cards between the locale's fence lines.

Every piece of pack text that enters the block, the title included, loses its chat markup and has its
``===`` runs shortened, so a card can neither speak as a chat role nor close the fence; titles and
sources are kept on one line and the summary and content are budgeted in o200k tokens."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from knowledge.search.text import safe_text, single_line
from nekomem.language.codes import normalize_language
from nekomem.language.counting import truncate_tokens
from nekomem.language.tables import load_locale_tables

STRINGS: dict[str, dict[str, Any]] = load_locale_tables("knowledge.search.locales")

SUMMARY_TOKENS = 120
CONTENT_TOKENS = 360
TITLE_CHARS = 120
SOURCE_CHARS = 120


@dataclass(frozen=True, slots=True)
class Card:
    title: str
    material_type: str
    summary: str
    content: str  # the best chunk
    source_name: str
    license: str


def _line(text: str, max_chars: int) -> str:
    return single_line(safe_text(text), max_chars)


def _budgeted(text: str, max_tokens: int) -> str:
    cut = truncate_tokens(safe_text(text).strip(), max_tokens)
    # A cut can split a control token, and joining lines can join two "=" runs: clean the final form too.
    return single_line(safe_text(cut), len(cut))


def render_block(cards: Sequence[Card], *, language: str | None) -> str:
    """The fenced block, or "" when there is no card."""
    if not cards:
        return ""
    text = STRINGS[normalize_language(language)]
    labels = text["labels"]
    lines = [text["begin"], text["note"]]
    for card in cards:
        kind = labels["corpus"] if card.material_type == "corpus" else labels["knowledge"]
        lines += ["", f"- [{_line(card.title, TITLE_CHARS)}] ({kind})"]
        summary = _budgeted(card.summary, SUMMARY_TOKENS) if card.summary else ""
        if summary:
            lines.append(f"  {labels['summary']}: {summary}")
        content = _budgeted(card.content, CONTENT_TOKENS)
        if content:
            lines.append(f"  {labels['content']}: {content}")
        provenance = f"  {labels['source']}: {_line(card.source_name, SOURCE_CHARS)}"
        license_text = _line(card.license, SOURCE_CHARS)
        if license_text:
            provenance += f" | {labels['license']}: {license_text}"
        lines.append(provenance)
    lines.append(text["end"])
    return "\n".join(lines)
