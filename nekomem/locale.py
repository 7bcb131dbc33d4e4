"""Locale resolution (re-exported from ``nekomem.language``, where it lives with the other language
tools; callers across the layers import it from here)."""

from __future__ import annotations

from nekomem.language.codes import SUPPORTED_LANGUAGES
from nekomem.language.resolution import (
    default_master_name,
    language_of,
    master_display_name,
    resolve_language,
)

SUPPORTED = SUPPORTED_LANGUAGES

__all__ = [
    "SUPPORTED",
    "SUPPORTED_LANGUAGES",
    "default_master_name",
    "language_of",
    "master_display_name",
    "resolve_language",
]
