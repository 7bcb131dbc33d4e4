"""Prompts of the reflections layer, in our own words, in the eight locales
(``reflections/locales/<code>.py``)."""

from __future__ import annotations

from facts.services import render_dialogue
from nekomem.language.resolution import master_display_name, resolve_language
from nekomem.language.tables import load_locale_tables

PROMPTS: dict[str, dict[str, str]] = load_locale_tables("reflections.locales", "PROMPTS")


def _prompt(language: str | None, key: str) -> str:
    return PROMPTS[resolve_language(language)][key]


def _master(master: str, language: str | None) -> str:
    """The card's name for the master, else the locale's word (主人, Master, ご主人様, …)."""
    return master_display_name(master, resolve_language(language))


def _user(content: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": content}]


def synthesis_messages(
    *, name: str, master: str, facts: list[tuple[str, int]], related: list[str], language: str | None
) -> list[dict[str, str]]:
    fact_line = _prompt(language, "fact_line")
    fact_lines = "\n".join(fact_line.format(text=text, importance=importance) for text, importance in facts)
    related_lines = "\n".join(f"- {text}" for text in related) or "-"
    return _user(
        _prompt(language, "synthesis").format(
            name=name, master=_master(master, language), facts=fact_lines, related=related_lines
        )
    )


def feedback_messages(
    *,
    name: str,
    master: str,
    items: list[tuple[str, str]],
    lines: list[tuple[str, str]],
    language: str | None,
) -> list[dict[str, str]]:
    rendered = "\n".join(f"- [{rid}] {text}" for rid, text in items)
    system = _prompt(language, "feedback").format(name=name, master=_master(master, language), items=rendered)
    return [{"role": "system", "content": system}, {"role": "user", "content": render_dialogue(lines)}]


def signal_messages(
    *, name: str, master: str, observations: list[str], facts: list[str], language: str | None
) -> list[dict[str, str]]:
    return _user(
        _prompt(language, "signals").format(
            name=name,
            master=_master(master, language),
            observations="\n".join(observations) or "-",
            facts="\n".join(facts),
        )
    )


def keyword_messages(
    *, name: str, master: str, messages: list[str], observations: list[str], language: str | None
) -> list[dict[str, str]]:
    return _user(
        _prompt(language, "keyword").format(
            name=name,
            master=_master(master, language),
            messages="\n".join(f"- {m}" for m in messages),
            observations="\n".join(observations) or "-",
        )
    )


def rebuttal_messages(
    *, name: str, master: str, observations: list[str], messages: list[str], language: str | None
) -> list[dict[str, str]]:
    return _user(
        _prompt(language, "rebuttal").format(
            name=name,
            master=_master(master, language),
            observations="\n".join(observations),
            messages="\n".join(f"- {m}" for m in messages),
        )
    )


def rerank_messages(
    *, name: str, master: str, queries: list[str], memories: list[str], budget: int, language: str | None
) -> list[dict[str, str]]:
    """The re-rank step of Stage 2's observation pool (``reflections.reranking.chat_ranker``)."""
    return _user(
        _prompt(language, "rerank").format(
            name=name,
            master=_master(master, language),
            queries="\n".join(f"- {q}" for q in queries),
            memories="\n".join(memories),
            budget=budget,
        )
    )


def refine_messages(
    *, name: str, master: str, members: list[tuple[str, float]], language: str | None
) -> list[dict[str, str]]:
    """One refine cluster of reflections: the members numbered from 0, each with its evidence score."""
    lines = "\n".join(
        _prompt(language, "refine_line").format(index=i, text=text, score=f"{score:.2f}")
        for i, (text, score) in enumerate(members)
    )
    return _user(_prompt(language, "refine").format(name=name, master=_master(master, language), lines=lines))


def recheck_messages(
    *, kind: str, name: str, master: str, text: str, date: str, language: str | None
) -> list[dict[str, str]]:
    """Schema re-check of one v1 entry; ``kind`` is ``reflection`` or ``fact``."""
    return _user(
        _prompt(language, f"recheck_{kind}").format(
            name=name, master=_master(master, language), text=text, date=date
        )
    )
