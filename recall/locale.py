"""Localised text of the working context and the recall block, in the eight locales
(``recall/locales/<code>.py``, the same keys in each)."""

from __future__ import annotations

from datetime import date
from typing import Any

from nekomem.language.plurals import plural
from nekomem.language.tables import load_locale_tables
from recall.calendar import holiday_names

STRINGS: dict[str, dict[str, Any]] = load_locale_tables("recall.locales")
HOLIDAYS: dict[str, dict[str, str]] = load_locale_tables("recall.locales", "HOLIDAYS")


def strings(language: str) -> dict[str, Any]:
    return STRINGS.get(language, STRINGS["en"])


def text(language: str, key: str, **values: object) -> str:
    return str(strings(language)[key]).format(**values)


def counted(language: str, key: str, n: int) -> str:
    """A plural-aware count: ``counted("ru", "days_ago", 3)`` → "3 дня назад"."""
    return plural(language, strings(language)[key], n)


def elapsed_text(language: str, seconds: float) -> str:
    minutes_total = int(seconds // 60)
    days, rest = divmod(minutes_total, 24 * 60)
    hours, minutes = divmod(rest, 60)
    units = strings(language)["elapsed"]
    parts = []
    if days:
        parts.append(plural(language, units["days"], days))
    if hours:
        parts.append(plural(language, units["hours"], hours))
    if minutes or not parts:
        parts.append(plural(language, units["minutes"], minutes))
    return text(language, "elapsed_join").join(parts)


def holiday_text(language: str, day: date) -> str | None:
    """ "Today is …" for a day the locale names (fixed-date and, for zh, zh-TW and ko, lunar)."""
    names = holiday_names(day, HOLIDAYS.get(language, HOLIDAYS["en"]))
    if not names:
        return None
    return text(language, "holiday", holiday=text(language, "holiday_join").join(names))


def warm_holiday_calendar() -> None:
    from django.utils import timezone

    holiday_text("zh", timezone.localdate())
