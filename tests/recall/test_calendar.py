"""Named days: each locale's fixed-date holidays and the lunar festivals (which move every year)."""

from __future__ import annotations

from datetime import date

import pytest

from recall import locale


@pytest.mark.parametrize(
    ("language", "day", "expected"),
    [
        ("zh", date(2026, 2, 17), "今天是春节。"),
        ("zh", date(2027, 2, 6), "今天是春节。"),  # another year, another solar day
        ("zh", date(2026, 3, 3), "今天是元宵节。"),
        ("zh", date(2026, 6, 19), "今天是端午节。"),
        ("zh", date(2026, 8, 19), "今天是七夕节。"),
        ("zh", date(2026, 9, 25), "今天是中秋节。"),
        ("zh", date(2026, 10, 18), "今天是重阳节。"),
        ("zh-TW", date(2026, 9, 25), "今天是中秋節。"),
        ("zh-TW", date(2026, 10, 10), "今天是國慶日。"),
        ("zh", date(2026, 10, 1), "今天是国庆节。"),
        ("ko", date(2026, 9, 25), "오늘은 추석입니다."),
        ("ja", date(2026, 5, 5), "今日はこどもの日です。"),
        ("ru", date(2026, 5, 9), "Сегодня День Победы."),
        ("es", date(2026, 12, 25), "Hoy es Navidad."),
        ("pt", date(2026, 12, 25), "Hoje é o Natal."),
        ("en", date(2026, 12, 25), "Today is Christmas Day."),
    ],
)
def test_the_holiday_line_names_the_day_in_the_locale(language, day, expected):
    assert locale.holiday_text(language, day) == expected


def test_an_ordinary_day_has_no_line_and_lunar_days_stay_with_their_locales():
    assert locale.holiday_text("zh", date(2026, 7, 14)) is None
    assert locale.holiday_text("en", date(2026, 9, 25)) is None  # 中秋 is not an English holiday


@pytest.mark.parametrize(
    ("language", "seconds", "expected"),
    [
        ("zh", 6 * 3600 + 12 * 60, "6小时12分钟"),
        ("zh-TW", 6 * 3600 + 12 * 60, "6小時12分鐘"),
        ("en", 3 * 86400 + 3600, "3 days 1 hour"),
        ("ja", 3 * 86400, "3日"),
        ("ko", 3 * 86400 + 5 * 60, "3일 5분"),
        ("ru", 3 * 86400 + 21 * 3600, "3 дня 21 час"),
        ("es", 3 * 86400, "3 días"),
        ("pt", 45 * 60, "45 minutos"),
    ],
)
def test_the_gap_reads_in_the_locale(language, seconds, expected):
    assert locale.elapsed_text(language, seconds) == expected


def test_the_calendar_is_warmed_as_the_server_starts():
    from nekomem.runtime import warmups

    assert warmups._warm_ups["holiday-calendar"] is locale.warm_holiday_calendar
    locale.warm_holiday_calendar()  # runs without a database
