"""Days that have a name: the fixed-date ones a locale table lists by ``MM-DD``, and the lunar-calendar
festivals (春节, 元宵, 端午, 七夕, 中秋, 重阳), which fall on a different solar day every year and are
listed as ``lunar:MM-DD`` (lunar month and day). Names stay in each layer's locale tables."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from functools import lru_cache


@lru_cache(maxsize=512)
def lunar_month_day(day: date) -> str | None:
    """``lunar:MM-DD`` of a solar date (leap months are not festival months, so they answer None)."""
    from lunar_python import Solar  # its tables load on first use, off the import path

    lunar = Solar.fromYmd(day.year, day.month, day.day).getLunar()
    if lunar.getMonth() < 0:  # a leap month
        return None
    return f"lunar:{lunar.getMonth():02d}-{lunar.getDay():02d}"


def holiday_names(day: date, names: Mapping[str, str]) -> list[str]:
    """The names a locale gives this day: fixed-date first, then lunar."""
    found = []
    fixed = names.get(f"{day.month:02d}-{day.day:02d}")
    if fixed:
        found.append(fixed)
    if any(key.startswith("lunar:") for key in names):
        lunar_key = lunar_month_day(day)
        if lunar_key and lunar_key in names:
            found.append(names[lunar_key])
    return found
