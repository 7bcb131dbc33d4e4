"""Japanese time expressions. 今日, 昨日, 去年, 今年, 5月3日 and 3日前 are read by the ``zh`` rules (the
same characters, the same windows); this module has the words Japanese says its own way."""

from __future__ import annotations

import re

from recall.times import zh
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
    few_days_ago,
    folded_keys,
    most_recent_weekday,
    recently,
    relative_day,
    relative_month,
    relative_year,
    rule,
    units_ago,
    week_window,
)  # fmt: skip

PARTS = folded_keys({
    "朝": MORNING, "午前": MORNING, "昼": NOON, "お昼": NOON, "午後": AFTERNOON, "夕方": EVENING,
    "夜": NIGHT, "晩": EVENING, "深夜": SMALL_HOURS, "明け方": SMALL_HOURS,
})  # fmt: skip
DAY_OFFSETS = folded_keys({
    "今日": 0, "きょう": 0, "昨日": -1, "きのう": -1, "一昨日": -2, "おととい": -2, "明日": 1, "あした": 1,
})  # fmt: skip
# Words that name a part of a day by themselves.
DAY_PART_WORDS = folded_keys({
    "今朝": (0, MORNING), "けさ": (0, MORNING), "今夜": (0, EVENING), "今晩": (0, EVENING),
    "昨夜": (-1, EVENING), "昨晩": (-1, EVENING), "ゆうべ": (-1, EVENING), "夕べ": (-1, EVENING),
})  # fmt: skip
WEEKDAYS = folded_keys({"月": 0, "火": 1, "水": 2, "木": 3, "金": 4, "土": 5, "日": 6})
WEEK_OFFSETS = folded_keys({"今週": 0, "先週": -1, "先々週": -2, "先先週": -2, "来週": 1})
UNITS = folded_keys({
    "日": "day", "週間": "week", "週": "week", "か月": "month", "ヶ月": "month", "カ月": "month",
    "ヵ月": "month", "ケ月": "month", "月": "month", "年": "year",
})  # fmt: skip
MONTH_OFFSETS = folded_keys({"今月": 0, "先月": -1, "先々月": -2, "来月": 1})
YEAR_OFFSETS = folded_keys({"昨年": -1, "一昨年": -2, "おととし": -2, "来年": 1, "本年": 0})


@rule(rf"(?P<day>{alternation(DAY_OFFSETS)})の?(?P<part>{alternation(PARTS)})?")
def _day(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_day(DAY_OFFSETS[m["day"]], PARTS[m["part"]] if m["part"] else None, ctx)


@rule(alternation(DAY_PART_WORDS))
def _day_part_word(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    offset, hours = DAY_PART_WORDS[m.group()]
    return relative_day(offset, hours, ctx)


@rule(rf"(?P<n>\d+|[一二三四五六七八九十]+)(?P<unit>{alternation(UNITS)})(?:前|ほど前|くらい前|ぐらい前)")
def _ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    count = zh.number(m["n"])
    return units_ago(UNITS[m["unit"]], count, ctx) if count is not None else None


@rule(r"(?:数日前|2、3日前|二、三日前|この前|こないだ|この間|先日)")
def _few_days_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return few_days_ago(ctx)


@rule(r"(?:最近|近頃|この頃|このごろ|ここ数日|ここ最近)")
def _recently(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return recently(ctx)


@rule(r"(?:少し前|ちょっと前|しばらく前|だいぶ前)")
def _a_while_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return a_while_ago(ctx)


@rule(rf"(?P<rel>{alternation(WEEK_OFFSETS)})(?:の?(?P<end>末)|の?(?P<wd>[月火水木金土日])曜(?:日)?)?")
def _week(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    weekday = WEEKEND if m["end"] else WEEKDAYS[m["wd"]] if m["wd"] else None
    return week_window(WEEK_OFFSETS[m["rel"]], weekday, ctx)


@rule(r"(?P<wd>[月火水木金土日])曜(?:日)?")
def _bare_weekday(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return most_recent_weekday(WEEKDAYS[m["wd"]], ctx)


@rule(r"(?:週末|土日)")
def _bare_weekend(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return bare_weekend(ctx)


@rule(r"(?:今週の初め|今週の前半|週の初め)")
def _earlier_this_week(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return earlier_this_week(ctx)


@rule(alternation(MONTH_OFFSETS))
def _month_rel(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_month(MONTH_OFFSETS[m.group()], ctx)


@rule(alternation(YEAR_OFFSETS))
def _year_rel(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_year(YEAR_OFFSETS[m.group()], ctx)
