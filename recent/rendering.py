from __future__ import annotations

from nekomem.characters.language import character_language
from nekomem.characters.models import Character
from nekomem.locale import master_display_name
from recent.messages import content_text
from recent.selectors import recent_window, theater_capsule_lines

_INTRO = {
    "zh": "以下是{name}与{master}最近的对话：",
    "en": "Here is the recent conversation between {name} and {master}:",
}


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
