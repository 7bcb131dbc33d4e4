"""Time expressions → [start, end) windows (recall.times)."""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from recall.times import TimeWindow, parse_time_window

TZ = ZoneInfo("Asia/Shanghai")
# Monday 30 November 2026, 15:00 local time.
NOW = datetime(2026, 11, 30, 15, 0, tzinfo=TZ)


def local(*args: int) -> datetime:
    return datetime(*args, tzinfo=TZ)  # type: ignore[misc,arg-type]


def window(expr: str) -> tuple[datetime, datetime] | None:
    parsed = parse_time_window(expr, now=NOW, tz=TZ)
    return (parsed.start, parsed.end) if parsed else None


def test_reference_now_is_a_monday() -> None:
    assert NOW.weekday() == 0


# --- ISO tokens (original §4.5) ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "start", "end"),
    [
        ("2023", local(2023, 1, 1), local(2024, 1, 1)),
        ("2023-05", local(2023, 5, 1), local(2023, 6, 1)),
        ("2023-12", local(2023, 12, 1), local(2024, 1, 1)),
        ("2023-05-03", local(2023, 5, 3), local(2023, 5, 4)),
        ("2023-05-03T10", local(2023, 5, 3, 10), local(2023, 5, 3, 11)),
        ("2023-05-03 10", local(2023, 5, 3, 10), local(2023, 5, 3, 11)),
        ("2023-05-03T10:35", local(2023, 5, 3, 10), local(2023, 5, 3, 11)),
        ("2023-05-03T10:35:59.123", local(2023, 5, 3, 10), local(2023, 5, 3, 11)),
        # Aware values convert to local time (UTC+8) before flooring.
        ("2023-05-03T10:35:12Z", local(2023, 5, 3, 18), local(2023, 5, 3, 19)),
        ("2023-05-03T23:10:00+00:00", local(2023, 5, 4, 7), local(2023, 5, 4, 8)),
        ("2023-05-03T10:00:00+08:00", local(2023, 5, 3, 10), local(2023, 5, 3, 11)),
    ],
)
def test_iso_tokens(expr: str, start: datetime, end: datetime) -> None:
    assert window(expr) == (start, end)


@pytest.mark.parametrize(
    ("expr", "start", "end"),
    [
        ("2023-05/2023-07", local(2023, 5, 1), local(2023, 8, 1)),
        ("2023-05..2023-07", local(2023, 5, 1), local(2023, 8, 1)),
        ("2023-07-10..2023-05", local(2023, 5, 1), local(2023, 7, 11)),  # union, order-free
        ("2023-05-03T10/2023-05-03T12", local(2023, 5, 3, 10), local(2023, 5, 3, 13)),
        ("2022/2023-02-01", local(2022, 1, 1), local(2023, 2, 2)),
        ("上周/今天", local(2026, 11, 23), local(2026, 12, 1)),
    ],
)
def test_ranges(expr: str, start: datetime, end: datetime) -> None:
    assert window(expr) == (start, end)


@pytest.mark.parametrize(
    "expr",
    [
        "",
        "   ",
        "hello",
        "2023-13",
        "2023-02-30",
        "2023-05-03T25",
        "2023-05-03T10:99",
        "2023-05/",
        "2023/2024/2025",
        "12345",
        "someday",
        "last banana",
        "昨",
        "13月",
        "5月32日",
        "blah 2023",
    ],
)
def test_bad_input_is_none(expr: str) -> None:
    assert window(expr) is None


def test_naive_now_is_taken_as_local_and_tz_may_be_a_name() -> None:
    parsed = parse_time_window("today", now=datetime(2026, 11, 30, 15), tz="Asia/Shanghai")
    assert parsed == TimeWindow(local(2026, 11, 30), local(2026, 12, 1))


def test_aware_now_in_another_zone_is_converted_first() -> None:
    # 20:00 UTC on the 30th is already 04:00 on 1 December in Shanghai.
    utc_now = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)
    parsed = parse_time_window("今天", now=utc_now, tz=TZ)
    assert parsed == TimeWindow(local(2026, 12, 1), local(2026, 12, 2))


def test_days_follow_wall_clock_across_dst() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    parsed = parse_time_window("2026-03-29", now=NOW, tz=berlin)
    assert parsed is not None
    # Same-zone subtraction is wall-clock in Python; compare instants instead.
    assert parsed.end.timestamp() - parsed.start.timestamp() == 23 * 3600
    assert parsed.start == datetime(2026, 3, 29, tzinfo=berlin)


# --- relative expressions, zh and en, against Monday 2026-11-30 15:00 -----------------------------------

YESTERDAY = (local(2026, 11, 29), local(2026, 11, 30))
DAY_BEFORE = (local(2026, 11, 28), local(2026, 11, 29))
TODAY = (local(2026, 11, 30), local(2026, 12, 1))
YESTERDAY_EVENING = (local(2026, 11, 29, 18), local(2026, 11, 30))
YESTERDAY_MORNING = (local(2026, 11, 29, 5), local(2026, 11, 29, 12))
THIS_MORNING = (local(2026, 11, 30, 5), local(2026, 11, 30, 12))
LAST_WEEK = (local(2026, 11, 23), local(2026, 11, 30))
LAST_WEEKEND = (local(2026, 11, 28), local(2026, 11, 30))
THIS_WEEK = (local(2026, 11, 30), local(2026, 12, 7))
THIS_WEEKEND = (local(2026, 12, 5), local(2026, 12, 7))
THREE_DAYS_AGO = (local(2026, 11, 27), local(2026, 11, 28))
TWO_WEEKS_AGO = (local(2026, 11, 16), local(2026, 11, 23))
LAST_MONTH = (local(2026, 10, 1), local(2026, 11, 1))
THIS_MONTH = (local(2026, 11, 1), local(2026, 12, 1))
LAST_YEAR = (local(2025, 1, 1), local(2026, 1, 1))
THIS_YEAR = (local(2026, 1, 1), local(2027, 1, 1))
RECENTLY = (local(2026, 11, 23), local(2026, 12, 1))
LAST_WEDNESDAY = (local(2026, 11, 25), local(2026, 11, 26))
MAY = (local(2026, 5, 1), local(2026, 6, 1))
MAY_2023 = (local(2023, 5, 1), local(2023, 6, 1))
MAY_3 = (local(2026, 5, 3), local(2026, 5, 4))


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("昨天", YESTERDAY),
        ("前天", DAY_BEFORE),
        ("今天", TODAY),
        ("昨天晚上", YESTERDAY_EVENING),
        ("昨晚", YESTERDAY_EVENING),
        ("今天早上", THIS_MORNING),
        ("昨天上午", YESTERDAY_MORNING),
        ("上周", LAST_WEEK),
        ("上个星期", LAST_WEEK),
        ("上周末", LAST_WEEKEND),
        ("这周", THIS_WEEK),
        ("本周", THIS_WEEK),
        ("本周末", THIS_WEEKEND),
        ("三天前", THREE_DAYS_AGO),
        ("3天前", THREE_DAYS_AGO),
        ("两周前", TWO_WEEKS_AGO),
        ("2个星期前", TWO_WEEKS_AGO),
        ("上个月", LAST_MONTH),
        ("这个月", THIS_MONTH),
        ("本月", THIS_MONTH),
        ("去年", LAST_YEAR),
        ("今年", THIS_YEAR),
        ("最近", RECENTLY),
        ("上周三", LAST_WEDNESDAY),
        ("上星期三", LAST_WEDNESDAY),
        ("五月", MAY),
        ("5月", MAY),
        ("5月份", MAY),
        ("2023年5月", MAY_2023),
        ("5月3日", MAY_3),
        ("5月3号", MAY_3),
        ("五月三日", MAY_3),
        ("2023年5月3日", (local(2023, 5, 3), local(2023, 5, 4))),
        ("2023年", (local(2023, 1, 1), local(2024, 1, 1))),
        ("十二月", (local(2025, 12, 1), local(2026, 1, 1))),  # December has not come yet this year
        ("12月25日", (local(2025, 12, 25), local(2025, 12, 26))),
        ("上上周", TWO_WEEKS_AGO),
        ("周日", YESTERDAY),
        ("星期一", TODAY),
        ("前几天", (local(2026, 11, 24), local(2026, 11, 30))),
        ("三个月前", (local(2026, 8, 1), local(2026, 9, 1))),
        ("两年前", (local(2024, 1, 1), local(2025, 1, 1))),
        ("前年", (local(2024, 1, 1), local(2025, 1, 1))),
    ],
)
def test_relative_zh(expr: str, expected: tuple[datetime, datetime]) -> None:
    assert window(expr) == expected


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("yesterday", YESTERDAY),
        ("Yesterday evening", YESTERDAY_EVENING),
        ("yesterday morning", YESTERDAY_MORNING),
        ("last night", YESTERDAY_EVENING),
        ("today", TODAY),
        ("this morning", THIS_MORNING),
        ("last week", LAST_WEEK),
        ("last weekend", LAST_WEEKEND),
        ("the weekend", LAST_WEEKEND),
        ("this week", THIS_WEEK),
        ("this weekend", THIS_WEEKEND),
        ("3 days ago", THREE_DAYS_AGO),
        ("three days ago", THREE_DAYS_AGO),
        ("two weeks ago", TWO_WEEKS_AGO),
        ("a week ago", LAST_WEEK),
        ("last month", LAST_MONTH),
        ("this month", THIS_MONTH),
        ("last year", LAST_YEAR),
        ("this year", THIS_YEAR),
        ("last Wednesday", LAST_WEDNESDAY),
        ("last wed", LAST_WEDNESDAY),
        ("in May", MAY),
        ("May", MAY),
        ("May 3", MAY_3),
        ("May 3rd", MAY_3),
        ("3 May", MAY_3),
        ("on the 3rd of May", MAY_3),
        ("May 2023", MAY_2023),
        ("May 3, 2023", (local(2023, 5, 3), local(2023, 5, 4))),
        ("December", (local(2025, 12, 1), local(2026, 1, 1))),
        ("recently", RECENTLY),
        ("lately", RECENTLY),
        ("earlier this week", (local(2026, 11, 30), NOW)),
        ("on Sunday", YESTERDAY),
        ("a few days ago", (local(2026, 11, 24), local(2026, 11, 30))),
        ("  Last Week?  ", LAST_WEEK),
        ("tonight", (local(2026, 11, 30, 18), local(2026, 12, 1))),
        ("the week before last", TWO_WEEKS_AGO),
    ],
)
def test_relative_en(expr: str, expected: tuple[datetime, datetime]) -> None:
    assert window(expr) == expected


def test_month_day_without_year_never_lands_in_the_future() -> None:
    parsed = parse_time_window("Dec 25", now=NOW, tz=TZ)
    assert parsed is not None and parsed.start < NOW
    leap = parse_time_window("2月29日", now=NOW, tz=TZ)
    assert leap == TimeWindow(local(2024, 2, 29), local(2024, 3, 1))


def test_window_helpers() -> None:
    w = TimeWindow(local(2026, 11, 29), local(2026, 11, 30))
    assert w.contains(local(2026, 11, 29, 23, 59))
    assert not w.contains(local(2026, 11, 30))  # half-open
    assert w.overlaps(local(2026, 11, 28), local(2026, 11, 29))  # closed event span touching the start
    assert not w.overlaps(local(2026, 11, 30), local(2026, 12, 1))
