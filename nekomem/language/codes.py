"""The eight locales the original renders and prompts in, and how a caller's code maps onto them.

Reference §5.1 / §1.7: a ``zh-*`` tag with tw, hk or hant is ``zh-TW``, any other ``zh-*`` is ``zh``;
ja, ko, ru, es and pt with or without a region; the Steam store names. ``supported_language`` says
whether a code is one of ours (a stored preference must be); ``normalize_language`` always answers
one (the original folds an unknown code into English).
"""

from __future__ import annotations

SUPPORTED_LANGUAGES: tuple[str, ...] = ("zh", "zh-TW", "en", "ja", "ko", "ru", "es", "pt")

_STEAM_NAMES = {
    "schinese": "zh",
    "tchinese": "zh-TW",
    "english": "en",
    "japanese": "ja",
    "koreana": "ko",
    "korean": "ko",
    "russian": "ru",
    "spanish": "es",
    "latam": "es",
    "portuguese": "pt",
    "brazilian": "pt",
}
_TRADITIONAL_MARKS = {"tw", "hk", "mo", "hant"}


def supported_language(code: str | None) -> str | None:
    """The supported locale a code names, or None for an empty or unsupported one."""
    if not code or not isinstance(code, str):
        return None
    tag = code.strip().replace("_", "-").lower()
    if not tag:
        return None
    if tag in _STEAM_NAMES:
        return _STEAM_NAMES[tag]
    parts = tag.split("-")
    base = parts[0]
    if base == "zh":
        return "zh-TW" if _TRADITIONAL_MARKS.intersection(parts[1:]) else "zh"
    if base in {"en", "ja", "ko", "ru", "es", "pt"}:
        return base
    return None


def normalize_language(code: str | None, default: str = "en") -> str:
    """Always one of the eight: an unknown code falls back to ``default`` (English, as the original)."""
    return supported_language(code) or default
