"""The working context for a new LLM session (``GET /new_dialog``, reference §5).

It reads every layer; the only write is the persona's ``ensure_persona`` step (the character card
mirrored into protected entries), which is a no-op unless the card changed.
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from nekomem.characters.models import Character
from nekomem.language.messages import message_text, strip_bracketed
from nekomem.language.resolution import master_display_name
from persona.selectors import long_term_memory_markdown, settings_text
from persona.services import persona_ensure_current
from recall import locale
from recent.models import RecentMessage
from recent.selectors import recent_window_with_last_time, theater_capsule_lines

GAP_NOTICE_SECONDS = 30 * 60
GAP_LONG_SECONDS = 5 * 60 * 60


def speaker_label(kind: str, character: Character, language: str) -> str:
    if kind == RecentMessage.Kind.HUMAN:
        return master_display_name(character.master_name, language)
    if kind == RecentMessage.Kind.AI:
        return character.name
    return locale.text(language, "system_label")


def _clock(moment: datetime) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M")


def recent_lines(character: Character, language: str, window: list[tuple[str, dict]]) -> list[str]:
    # Rows, not model instances: a window waiting for compression holds thousands of messages, and
    # every /new_dialog renders all of them.
    labels = {kind: speaker_label(kind, character, language) for kind in RecentMessage.Kind.values}
    other = speaker_label("", character, language)
    lines = []
    for kind, data in window:
        body = strip_bracketed(message_text(data.get("content"))).strip()
        lines.append(f"{labels.get(kind, other)} | {body}")
    return lines


def gap_lines(character: Character, language: str, now: datetime, last: datetime | None) -> list[str]:
    """``last``: the raw log's newest time."""
    if last is None:
        return []
    gap = (now - last).total_seconds()
    if gap < GAP_NOTICE_SECONDS:
        return []
    master = master_display_name(character.master_name, language)
    notice = locale.text(language, "gap", master=master, elapsed=locale.elapsed_text(language, gap))
    if gap < GAP_LONG_SECONDS:
        return [notice]
    return [
        locale.text(language, "gap_now", time=_clock(now))
        + notice
        + locale.text(language, "gap_long", name=character.name, master=master)
    ]


def holiday_line(language: str, now: datetime) -> list[str]:
    line = locale.holiday_text(language, timezone.localtime(now).date())
    return [line] if line else []


def long_term_memory(character: Character, language: str, now: datetime) -> str:
    """The persona header, then persona, reflections, older memories and the suppressed section."""
    state = persona_ensure_current(character=character)
    markdown = long_term_memory_markdown(
        character=character, language=language, now=now, version=character.memory_version
    )
    if not markdown:
        markdown = settings_text(character=character, state=state, language=language)
    return locale.text(language, "persona_header", name=character.name) + markdown


def working_context_render(*, character: Character, language: str, now: datetime | None = None) -> str:
    """``character`` as read just now (``wait_for_settled``): its memory version is what the
    long-term-memory block's cache is checked against."""
    now = now or timezone.now()
    window, last = recent_window_with_last_time(character_id=character.pk)
    # The header ends with a newline and the sentence follows it directly (reference §5.1).
    lines = [
        long_term_memory(character, language, now)
        + locale.text(language, "inner_thoughts_header", name=character.name)
        + locale.text(language, "inner_thoughts", time=_clock(now), name=character.name),
        *theater_capsule_lines(character_id=character.pk, language=language),
        *recent_lines(character, language, window),
        *gap_lines(character, language, now, last),
        *holiday_line(language, now),
    ]
    return "\n".join(lines) + "\n"
