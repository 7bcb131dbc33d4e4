from __future__ import annotations

from nekomem.characters.language import character_language
from nekomem.characters.models import Character
from nekomem.language.resolution import master_display_name
from nekomem.language.tables import load_locale_tables
from recent.messages import content_text
from recent.selectors import recent_window, theater_capsule_lines

# The opening is the second half of /new_dialog's inner-thoughts sentence (reference §5.1): game
# flows read it, so it follows the locale too.
_TEXT: dict[str, dict[str, str]] = load_locale_tables("recent.locales")


def recent_history_text(*, character: Character, language: str | None = None) -> str:
    """Plain transcript for game flows: an intro line, then ``speaker | content``; memos bare."""
    lang = character_language(character, request_language=language)
    master = master_display_name(character.master_name, lang)
    lines = theater_capsule_lines(character_id=character.pk, language=lang)
    for message in recent_window(character_id=character.pk):
        text = content_text(message.data.get("content"))
        if message.type == "system":
            lines.append(text)
        else:
            speaker = master if message.type == "human" else character.name
            lines.append(f"{speaker} | {text}")
    intro = _TEXT[lang]["history_intro" if lines else "history_empty"].format(name=character.name)
    return "\n".join([intro, *lines]) + "\n"
