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
