"""Prompts of the facts layer, in our own words, in the eight locales (``facts/locales/<code>.py``).

The dialogue sits between the original's delimiters, kept in Simplified Chinese in every language
because downstream tooling matches them as a watermark (reference §7).
"""

from __future__ import annotations

from nekomem.language.resolution import (
    language_of,  # noqa: F401  re-exported: the layer's prompts choose by it
    master_display_name,
    resolve_language,
)
from nekomem.language.tables import load_locale_tables

DIALOGUE_OPEN = "======以下为对话======"
DIALOGUE_CLOSE = "======以上为对话======"

PROMPTS: dict[str, dict[str, str]] = load_locale_tables("facts.locales", "PROMPTS")


def _prompt(language: str | None, key: str) -> str:
    return PROMPTS[resolve_language(language)][key]


def _master(master: str, language: str | None) -> str:
    """The card's name for the master, else the locale's word (主人, Master, ご主人様, …)."""
    return master_display_name(master, resolve_language(language))


def render_dialogue(lines: list[tuple[str, str]]) -> str:
    body = "\n".join(f"{role} | {content}" for role, content in lines)
    return f"{DIALOGUE_OPEN}\n{body}\n{DIALOGUE_CLOSE}"


def extraction_messages(
    *, name: str, master: str, lines: list[tuple[str, str]], language: str | None
) -> list[dict[str, str]]:
    system = _prompt(language, "extract").format(name=name, master=_master(master, language))
    return [{"role": "system", "content": system}, {"role": "user", "content": render_dialogue(lines)}]


def batch_extraction_messages(
    *, name: str, segments: list[tuple[str, list[tuple[str, str]]]], language: str | None
) -> list[dict[str, str]]:
    """One prompt over a group's segments, each ``(speaker, lines)``, numbered from 1 in request order."""
    system = _prompt(language, "extract_batch").format(name=name, count=len(segments))
    header = _prompt(language, "segment_header")
    body = "\n\n".join(
        f"{header.format(index=i, speaker=speaker)}\n{render_dialogue(lines)}"
        for i, (speaker, lines) in enumerate(segments, start=1)
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": body}]


def disclosure_messages(
    *, name: str, master: str, lines: list[tuple[str, str]], known: list[str], language: str | None
) -> list[dict[str, str]]:
    known_text = "\n".join(f"- {k}" for k in known) or "-"
    system = _prompt(language, "disclosure").format(
        name=name, master=_master(master, language), known=known_text
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": render_dialogue(lines)}]


def arbitration_messages(
    *, name: str, pairs: list[tuple[int, str, str]], language: str | None
) -> list[dict[str, str]]:
    pair = _prompt(language, "pair")
    rendered = "\n".join(pair.format(index=i, new=new, old=old) for i, new, old in pairs)
    return [{"role": "user", "content": _prompt(language, "arbitrate").format(name=name, pairs=rendered)}]
