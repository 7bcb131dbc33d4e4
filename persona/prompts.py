"""Prompts of the persona layer, in our own words, in the eight locales (``persona/locales/<code>.py``,
``PROMPTS``). The model is asked in the user's language; the entries it merges keep theirs."""

from __future__ import annotations

from typing import Any

from nekomem.language.tables import load_locale_tables

PROMPTS: dict[str, dict[str, str]] = load_locale_tables("persona.locales", "PROMPTS")


def _pick(language: str) -> dict[str, str]:
    return PROMPTS.get(language, PROMPTS["en"])


def merge_messages(
    *, name: str, master: str, entity: str, text: str, pool: list[str], language: str
) -> list[dict[str, Any]]:
    table = _pick(language)
    prompt = table["merge"].format(
        name=name, master=master, entity=entity, text=text, pool="\n".join(pool) or table["none"]
    )
    return [{"role": "user", "content": prompt}]


def correction_line(
    *, index: int, old_text: str, old_trust: str, new_text: str, new_trust: str, language: str
) -> str:
    return _pick(language)["correction_line"].format(
        index=index, old_text=old_text, old_trust=old_trust, new_text=new_text, new_trust=new_trust
    )


def corrections_messages(*, name: str, lines: list[str], language: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": _pick(language)["corrections"].format(name=name, lines="\n".join(lines))}
    ]


def import_fuse_messages(*, entity: str, cap: int, items: list[str], language: str) -> list[dict[str, Any]]:
    """External Markdown import: fuse one entity's entries into a few statements under ``cap`` tokens."""
    lines = "\n".join(f"- {item.strip()}" for item in items)
    prompt = _pick(language)["import_fuse"].format(entity=entity, cap=cap, items=lines)
    return [{"role": "user", "content": prompt}]


def refine_messages(
    *, name: str, section: str, members: list[tuple[str, float]], language: str
) -> list[dict[str, Any]]:
    """One refine cluster: the members numbered from 0, each with its evidence score."""
    table = _pick(language)
    lines = "\n".join(
        table["refine_line"].format(index=i, text=text, score=f"{score:.2f}")
        for i, (text, score) in enumerate(members)
    )
    return [{"role": "user", "content": table["refine"].format(name=name, section=section, lines=lines)}]
