"""Plural categories (CLDR's cardinal rules for integers) of the eight locales, so a count reads
"1 day / 3 days", "1 день / 3 дня / 5 дней". Locale tables give a form per category in a dict with
the keys ``one``, ``few``, ``many`` and ``other`` (the same four in every locale, unused ones repeated)."""

from __future__ import annotations

from collections.abc import Mapping

PLURAL_CATEGORIES = ("one", "few", "many", "other")


def plural_category(language: str, n: int) -> str:
    n = abs(n)
    if language == "ru":
        if n % 10 == 1 and n % 100 != 11:
            return "one"
        if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
            return "few"
        return "many"
    if language in ("en", "es"):
        return "one" if n == 1 else "other"
    if language == "pt":
        return "one" if n in (0, 1) else "other"
    return "other"  # zh, zh-TW, ja, ko: no grammatical plural


def plural(language: str, forms: Mapping[str, str], n: int) -> str:
    return forms[plural_category(language, n)].format(n=n)
