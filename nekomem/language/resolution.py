"""Which of the eight locales a request, a character or the user's own words are in.

``resolve_language`` folds the first code a caller has (the request's, then the character's) and falls
back to the server's ``NEKOMEM_LANGUAGE``; ``language_of`` reads the script of the user's words, which
the prompts follow before the UI language (reference §7).
"""

from __future__ import annotations

from django.conf import settings

from nekomem.language.codes import SUPPORTED_LANGUAGES, normalize_language, supported_language

# What the companion calls the user when the card names no master, in the user's language.
_DEFAULT_MASTER = {
    "zh": "主人",
    "zh-TW": "主人",
    "en": "Master",
    "ja": "ご主人様",
    "ko": "주인님",
    "ru": "Хозяин",
    "es": "Amo",
    "pt": "Mestre",
}


def resolve_language(*candidates: str | None) -> str:
    """The first candidate that is set wins (an unknown code reads as English, as the original);
    none set → the server default."""
    for code in candidates:
        if code and isinstance(code, str) and code.strip():
            return normalize_language(code)
    return normalize_language(settings.NEKOMEM_DEFAULT_LANGUAGE, default="zh")


def default_master_name(language: str) -> str:
    return _DEFAULT_MASTER.get(language, _DEFAULT_MASTER["en"])


def master_display_name(master_name: str, language: str) -> str:
    return master_name or default_master_name(language)


def _is_han(ch: str) -> bool:
    return "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf" or "\uf900" <= ch <= "\ufaff"


def _is_kana(ch: str) -> bool:
    return "\u3040" <= ch <= "\u30ff" or "\u31f0" <= ch <= "\u31ff" or "\uff66" <= ch <= "\uff9f"


def _is_hangul(ch: str) -> bool:
    return "\uac00" <= ch <= "\ud7a3" or "\u1100" <= ch <= "\u11ff" or "\u3130" <= ch <= "\u318f"


def _is_cyrillic(ch: str) -> bool:
    return "\u0400" <= ch <= "\u04ff"


def _traditional(han: str, fallback: str | None) -> bool:
    """Traditional when some character changes under conversion to Simplified and none changes under
    conversion to Traditional; text that is the same in both scripts keeps a zh-TW fallback."""
    from zhconv import convert  # the conversion tables load on first use, off the import path

    to_simplified = convert(han, "zh-hans") != han
    to_traditional = convert(han, "zh-hant") != han
    if to_simplified and not to_traditional:
        return True
    if to_traditional and not to_simplified:
        return False
    if to_simplified and to_traditional:
        simplified_only = sum(convert(ch, "zh-hans") != ch for ch in han)
        return simplified_only > sum(convert(ch, "zh-hant") != ch for ch in han)
    return fallback == "zh-TW"


def language_of(texts: list[str], fallback: str | None) -> str | None:
    """The language of the user's own words by script; Latin text keeps an es/pt/en fallback (those
    three are not told apart here), ``en`` otherwise; no words → the fallback."""
    fallback = supported_language(fallback) or fallback
    sample = "".join(texts)[:500]
    letters = [ch for ch in sample if ch.isalpha()]
    if not letters:
        return fallback
    counts = {"han": 0, "kana": 0, "hangul": 0, "cyrillic": 0, "latin": 0}
    han_chars: list[str] = []
    for ch in letters:
        if _is_kana(ch):
            counts["kana"] += 1
        elif _is_hangul(ch):
            counts["hangul"] += 1
        elif _is_han(ch):
            counts["han"] += 1
            han_chars.append(ch)
        elif _is_cyrillic(ch):
            counts["cyrillic"] += 1
        elif ch.isascii() or "\u00c0" <= ch <= "\u024f":
            counts["latin"] += 1
    total = len(letters)
    # Japanese mixes kanji with kana: a few kana among Han mean Japanese, not Chinese.
    if counts["kana"] and counts["kana"] * 10 >= counts["han"]:
        return "ja"
    if counts["hangul"] * 4 >= total:
        return "ko"
    if counts["han"] * 4 >= total:
        if fallback == "ja":  # kanji alone (東京大学) is as Japanese as it is Chinese
            return "ja"
        return "zh-TW" if _traditional("".join(han_chars), fallback) else "zh"
    if counts["cyrillic"] * 4 >= total:
        return "ru"
    if fallback in ("en", "es", "pt"):
        return fallback
    return "en"


__all__ = [
    "SUPPORTED_LANGUAGES",
    "default_master_name",
    "language_of",
    "master_display_name",
    "resolve_language",
]
