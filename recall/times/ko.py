"""Korean time expressions. Particles attach to the word (지난주에, 어제는): Hangul is not a word
boundary for the search inside a text, so 지난주 is found in 지난주에 뭐 했어?"""

from __future__ import annotations

import re

from recall.times.windows import (
    AFTERNOON,
    EVENING,
    MORNING,
    NIGHT,
    NOON,
    SMALL_HOURS,
    WEEKEND,
    Context,
    TimeWindow,
    a_while_ago,
    alternation,
    bare_weekend,
    earlier_this_week,
    explicit_date,
    few_days_ago,
    most_recent_weekday,
    recently,
    relative_day,
    relative_month,
    relative_year,
    rule,
    units_ago,
    week_window,
    year,
)  # fmt: skip

# Native numbers count days, weeks and months (두 달, 세 주); Sino-Korean ones too (이 주, 삼 개월).
NUMBERS = {
    "한": 1, "하루": 1, "두": 2, "이틀": 2, "세": 3, "사흘": 3, "네": 4, "나흘": 4, "다섯": 5, "여섯": 6,
    "일곱": 7, "여덟": 8, "아홉": 9, "열": 10,
    "일": 1, "이": 2, "삼": 3, "사": 4, "오": 5, "육": 6, "칠": 7, "팔": 8, "구": 9, "십": 10,
}  # fmt: skip
PARTS = {"아침": MORNING, "오전": MORNING, "점심": NOON, "오후": AFTERNOON, "저녁": EVENING, "밤": NIGHT,
         "새벽": SMALL_HOURS}  # fmt: skip
DAY_OFFSETS = {"오늘": 0, "어제": -1, "어저께": -1, "그저께": -2, "그제": -2, "엊그제": -2, "내일": 1}
WEEKDAYS = {"월": 0, "화": 1, "수": 2, "목": 3, "금": 4, "토": 5, "일": 6}
WEEK_OFFSETS = {"이번": 0, "이번 주": 0, "지난": -1, "저번": -1, "지지난": -2, "다음": 1}
UNITS = {"일": "day", "날": "day", "주": "week", "주일": "week", "개월": "month", "달": "month", "년": "year",
         "해": "year"}  # fmt: skip
MONTH_OFFSETS = {"이번": 0, "지난": -1, "저번": -1, "지지난": -2, "다음": 1}
YEAR_OFFSETS = {"올해": 0, "금년": 0, "작년": -1, "지난해": -1, "재작년": -2, "내년": 1}
REL = r"(?P<rel>지지난|지난|저번|이번|다음)"


def number(text: str) -> int | None:
    return int(text) if text.isdigit() else NUMBERS.get(text)


@rule(rf"(?P<day>{alternation(DAY_OFFSETS)}) ?(?P<part>{alternation(PARTS)})?")
def _day(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_day(DAY_OFFSETS[m["day"]], PARTS[m["part"]] if m["part"] else None, ctx)


@rule(r"(?:어젯밤|간밤)")
def _last_night(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_day(-1, NIGHT, ctx)


@rule(r"(?:오늘밤|오늘 밤)")
def _tonight(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_day(0, EVENING, ctx)


@rule(rf"(?P<n>\d+|{alternation(NUMBERS)}) ?(?P<unit>{alternation(UNITS)}) ?(?:전|쯤 전|정도 전|前)")
def _ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    count = number(m["n"])
    if count is None:
        return None
    return units_ago(UNITS[m["unit"]], count, ctx)


NATIVE_DAYS = {"하루": 1, "이틀": 2, "사흘": 3, "나흘": 4}


@rule(rf"(?P<n>{alternation(NATIVE_DAYS)}) ?(?:전|쯤 전|정도 전)")
def _native_days_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return units_ago("day", NATIVE_DAYS[m["n"]], ctx)


@rule(r"(?:며칠 전|몇 일 전|몇일 전|엊그제|요 며칠 전)")
def _few_days_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return few_days_ago(ctx)


@rule(r"(?:최근|요즘|요새|근래|요 며칠|최근 며칠)")
def _recently(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return recently(ctx)


@rule(r"(?:얼마 전|얼마전|좀 전에|한참 전|예전에)")
def _a_while_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return a_while_ago(ctx)


@rule(rf"{REL} ?주 ?(?:(?P<end>주말)|(?P<wd>[월화수목금토일])요일)?")
def _week(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    weekday = WEEKEND if m["end"] else WEEKDAYS[m["wd"]] if m["wd"] else None
    return week_window(WEEK_OFFSETS[m["rel"]], weekday, ctx)


@rule(rf"{REL} ?주말")
def _weekend(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return week_window(WEEK_OFFSETS[m["rel"]], WEEKEND, ctx)


@rule(rf"{REL} ?(?P<wd>[월화수목금토일])요일")
def _rel_weekday(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return week_window(WEEK_OFFSETS[m["rel"]], WEEKDAYS[m["wd"]], ctx)


@rule(r"(?P<wd>[월화수목금토일])요일")
def _bare_weekday(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return most_recent_weekday(WEEKDAYS[m["wd"]], ctx)


@rule(r"주말")
def _bare_weekend(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return bare_weekend(ctx)


@rule(r"(?:이번 주 초|이번주 초|이번 주 초반|주초)")
def _earlier_this_week(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return earlier_this_week(ctx)


@rule(rf"{REL} ?달")
def _month_rel(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_month(MONTH_OFFSETS[m["rel"]], ctx)


@rule(alternation(YEAR_OFFSETS))
def _year_rel(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_year(YEAR_OFFSETS[m.group()], ctx)


@rule(r"(?:(?P<y>\d{4}) ?년 ?)?(?P<m>\d{1,2}) ?월(?: ?(?P<d>\d{1,2}) ?일)?")
def _date(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return explicit_date(int(m["y"]) if m["y"] else None, int(m["m"]), int(m["d"]) if m["d"] else None, ctx)


@rule(r"(?P<y>\d{4}) ?년")
def _year(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return year(int(m["y"]), ctx.tz)
