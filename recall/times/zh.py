"""Chinese (Simplified) time expressions. Traditional spellings reach these rules through the fold of
``windows`` (上週 → 上周); the words only Taiwan uses are in ``zh_tw``."""

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

DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}


def number(text: str) -> int | None:
    """Digits, or Chinese numerals up to 99 (三, 十二, 二十三, 两)."""
    if text.isdigit():
        return int(text)
    if not text or any(ch not in DIGITS and ch != "十" for ch in text):
        return None
    if "十" not in text:
        return DIGITS[text] if len(text) == 1 else None
    tens, _, ones = text.partition("十")
    if len(tens) > 1 or len(ones) > 1:
        return None
    return (DIGITS[tens] if tens else 1) * 10 + (DIGITS[ones] if ones else 0)


PARTS = {
    "早上": MORNING, "早晨": MORNING, "上午": MORNING, "早": MORNING, "中午": NOON, "下午": AFTERNOON,
    "傍晚": EVENING, "晚上": EVENING, "夜里": NIGHT, "夜晚": NIGHT, "晚": EVENING, "夜": NIGHT,
    "凌晨": SMALL_HOURS,
}  # fmt: skip
DAY_OFFSETS = {
    "今天": 0,
    "今日": 0,
    "今": 0,
    "昨天": -1,
    "昨日": -1,
    "昨": -1,
    "前天": -2,
    "明天": 1,
    "明": 1,
}
WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": WEEKEND}
UNITS = {"天": "day", "日": "day", "周": "week", "星期": "week", "个星期": "week", "礼拜": "week",
         "个礼拜": "week", "个月": "month", "月": "month", "年": "year"}  # fmt: skip
WEEK_OFFSETS = {
    "这": 0,
    "本": 0,
    "这个": 0,
    "上": -1,
    "上个": -1,
    "上上": -2,
    "上上个": -2,
    "下": 1,
    "下个": 1,
}
MONTH_OFFSETS = {"这个": 0, "本": 0, "这": 0, "上个": -1, "上": -1, "上上个": -2, "下个": 1, "下": 1}
YEAR_OFFSETS = {"今年": 0, "去年": -1, "前年": -2, "明年": 1, "本年": 0}
NUM = r"\d{1,2}|[一二三四五六七八九十]{1,3}"
WEEK_WORD = r"(?:周|星期|礼拜|个星期|个礼拜)"


@rule(rf"(?P<day>{alternation(DAY_OFFSETS)})(?P<part>{alternation(PARTS)})?")
def _day(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    if len(m["day"]) == 1 and m["part"] is None:
        return None  # a lone 今/昨 is not a time expression
    return relative_day(DAY_OFFSETS[m["day"]], PARTS[m["part"]] if m["part"] else None, ctx)


@rule(
    r"(?P<n>\d+|[零〇一二两三四五六七八九十]+)(?P<unit>天|日|个星期|星期|个礼拜|礼拜|周|个月|年)(?:前|以前|之前)"
)
def _ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    count = number(m["n"])
    return units_ago(UNITS[m["unit"]], count, ctx) if count is not None else None


@rule(r"(?:前几天|几天前|这几天前)")
def _few_days_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return few_days_ago(ctx)


@rule(r"(?:最近几天|最近|近来|这几天|近几天)")
def _recently(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return recently(ctx)


@rule(r"(?:前段时间|前一段时间|前些日子|之前一段时间|不久前)")
def _a_while_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return a_while_ago(ctx)


@rule(rf"(?P<rel>上上个|上上|上个|这个|上|这|本|下个|下){WEEK_WORD}(?P<wd>[一二三四五六日天末])?")
def _week(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return week_window(WEEK_OFFSETS[m["rel"]], WEEKDAYS[m["wd"]] if m["wd"] else None, ctx)


@rule(r"(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])")
def _bare_weekday(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return most_recent_weekday(WEEKDAYS[m["wd"]], ctx)


@rule(r"周末")
def _bare_weekend(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return bare_weekend(ctx)


@rule(r"(?:这周早些时候|本周早些时候|这周前几天|这周初|本周初)")
def _earlier_this_week(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return earlier_this_week(ctx)


@rule(r"(?P<rel>上上个|上个|这个|上|本|这|下个|下)月(?:份)?")
def _month_rel(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_month(MONTH_OFFSETS[m["rel"]], ctx)


@rule(r"(?P<rel>今年|去年|前年|明年|本年)")
def _year_rel(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_year(YEAR_OFFSETS[m["rel"]], ctx)


@rule(rf"(?:(?P<y>\d{{4}})年)?(?P<m>{NUM})月(?:份)?(?:(?P<d>{NUM})[日号])?")
def _date(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    month_number, day = number(m["m"]), number(m["d"]) if m["d"] else None
    if month_number is None or (m["d"] and day is None):
        return None
    return explicit_date(int(m["y"]) if m["y"] else None, month_number, day, ctx)


@rule(r"(?P<y>\d{4})年")
def _year(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return year(int(m["y"]), ctx.tz)
