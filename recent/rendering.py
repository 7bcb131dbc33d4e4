from __future__ import annotations

from nekomem.characters.language import character_language
from nekomem.characters.models import Character
from nekomem.locale import master_display_name
from recent.messages import content_text
from recent.selectors import recent_window, theater_capsules_newest

_INTRO = {
    "zh": "以下是{name}与{master}最近的对话：",
    "en": "Here is the recent conversation between {name} and {master}:",
}


# Theater capsules (reference §1.7): one line each, newest kept first within the budget, shown oldest
# first. The lead fills the other locales in; a language without its own line uses English.
THEATER_LINE = {
    "zh": {"titled": "【剧场回顾】《{title}》：{summary}", "untitled": "【剧场回顾】{summary}"},
    "en": {"titled": "[Theater recap] “{title}”: {summary}", "untitled": "[Theater recap] {summary}"},
}
CAPSULE_MAX_LINES = 5
CAPSULE_MAX_CHARS = 400  # of one summary
CAPSULE_BUDGET_CHARS = 1500  # of all the lines together


def _theater_line(language: str, key: str) -> str:
    table = THEATER_LINE.get(language) or THEATER_LINE.get(language.split("-")[0]) or THEATER_LINE["en"]
    return table[key]


def theater_capsule_lines(*, character_id: int, language: str) -> list[str]:
    """The character's story capsules as budgeted lines for ``/new_dialog`` and
    ``/get_recent_history``."""
    lines: list[str] = []
    used = 0
    for title, summary in theater_capsules_newest(character_id=character_id, limit=CAPSULE_MAX_LINES):
        text = " ".join(summary.split())
        if len(text) > CAPSULE_MAX_CHARS:
            text = text[: CAPSULE_MAX_CHARS - 1] + "…"
        key = "titled" if title else "untitled"
        line = _theater_line(language, key).format(title=title, summary=text)
        if used + len(line) > CAPSULE_BUDGET_CHARS:
            break
        lines.append(line)
        used += len(line)
    return lines[::-1]


def recent_history_text(*, character: Character, language: str | None = None) -> str:
    """Plain transcript for game flows: an intro line, then ``speaker | content``; memos bare."""
    lang = character_language(character, request_language=language)
    master = master_display_name(character.master_name, lang)
    lines = [_INTRO.get(lang, _INTRO["en"]).format(name=character.name, master=master)]
    lines += theater_capsule_lines(character_id=character.pk, language=lang)
    for message in recent_window(character_id=character.pk):
        text = content_text(message.data.get("content"))
        if message.type == "system":
            lines.append(text)
        else:
            speaker = master if message.type == "human" else character.name
            lines.append(f"{speaker} | {text}")
    return "\n".join(lines) + "\n"
