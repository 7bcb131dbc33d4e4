"""Locale resolution. zh and en are complete; other codes fall back to en, zh-* to zh."""

from __future__ import annotations

from django.conf import settings

SUPPORTED = ("zh", "en")


def resolve_language(*candidates: str | None) -> str:
    for code in (*candidates, settings.NEKOMEM_DEFAULT_LANGUAGE):
        if not code:
            continue
        base = code.replace("_", "-").split("-")[0].lower()
        if base in SUPPORTED:
            return base
        return "en"
    return "zh"


_DEFAULT_MASTER = {"zh": "主人", "en": "Master"}


def default_master_name(language: str) -> str:
    return _DEFAULT_MASTER.get(language, _DEFAULT_MASTER["en"])


def master_display_name(master_name: str, language: str) -> str:
    return master_name or default_master_name(language)


def language_of(texts: list[str], fallback: str | None) -> str | None:
    """Chosen from the user's own words first, the UI language second (reference §7)."""
    sample = "".join(texts)[:500]
    if not sample:
        return fallback
    han = sum(1 for ch in sample if "\u4e00" <= ch <= "\u9fff")
    return "zh" if han * 4 >= len(sample) else "en"
