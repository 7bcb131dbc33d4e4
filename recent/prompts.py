"""Prompts of the recent layer in the eight locales (``recent/locales/<code>.py``; our own wording,
reference §7 describes the intent).

The dialogue delimiters stay in Simplified Chinese in every language: the original matches them as
a watermark, and the models we target read them fine either way.
"""

from __future__ import annotations

from nekomem.language.tables import load_locale_tables

DIALOGUE_START = "======以下为对话======"
DIALOGUE_END = "======以上为对话======"

PROMPTS: dict[str, dict[str, str]] = load_locale_tables("recent.locales", "PROMPTS")
MEMO_PREFIX: dict[str, str] = {
    language: table["memo_prefix"] for language, table in load_locale_tables("recent.locales").items()
}


def _prompt(language: str, key: str) -> str:
    return PROMPTS.get(language, PROMPTS["en"])[key]


def _framed(dialogue: str) -> str:
    return f"{DIALOGUE_START}\n{dialogue}\n{DIALOGUE_END}"


def summarise_messages(
    *, language: str, name: str, master: str, dialogue: str, stale_hint: bool = False
) -> list[dict[str, str]]:
    system = _prompt(language, "summarise").format(name=name, master=master)
    user = (_prompt(language, "stale_hint") if stale_hint else "") + _framed(dialogue)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def further_summarise_messages(
    *, language: str, name: str, master: str, summary: str
) -> list[dict[str, str]]:
    system = _prompt(language, "further").format(name=name, master=master)
    return [{"role": "system", "content": system}, {"role": "user", "content": summary}]


def review_messages(*, language: str, name: str, master: str, dialogue: str) -> list[dict[str, str]]:
    system = _prompt(language, "review").format(name=name, master=master)
    return [{"role": "system", "content": system}, {"role": "user", "content": _framed(dialogue)}]


def stale_hint_text(language: str) -> str:
    return _prompt(language, "stale_hint")
