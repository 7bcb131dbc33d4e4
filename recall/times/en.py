"""English time expressions."""

from __future__ import annotations

import re

from recall.times.windows import (
    AFTERNOON,
    EVENING,
    MORNING,
    NIGHT,
    NOON,
    WEEKEND,
    Context,
    TimeWindow,
    a_while_ago,
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
)  # fmt: skip

NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
MONTHS = {
    name: index
    for index, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
         ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
         ("october", "oct"), ("november", "nov"), ("december", "dec")],
        start=1,
    )
    for name in names
}  # fmt: skip
# Inside a longer text a month name alone is taken only when it cannot be an ordinary word or an
# abbreviation ("may I ask", "march on", "jan" the name): with a day or a year every name counts.
_AMBIGUOUS_ALONE = {"may", "march", "mar", "jan", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
                    "feb", "apr"}  # fmt: skip
WEEKDAYS = {
    name: index
    for index, names in enumerate(
        [("monday", "mon"), ("tuesday", "tue", "tues"), ("wednesday", "wed"), ("thursday", "thu", "thurs"),
         ("friday", "fri"), ("saturday", "sat"), ("sunday", "sun")]
    )
    for name in names
}  # fmt: skip
PARTS = {"morning": MORNING, "noon": NOON, "afternoon": AFTERNOON, "evening": EVENING, "night": NIGHT}
DAY_OFFSETS = {"today": 0, "yesterday": -1, "tomorrow": 1}
RELATIVE = {"this": 0, "last": -1, "past": -1, "previous": -1, "next": 1}


def number(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    return NUMBERS.get(text)


@rule(r"(?P<day>today|yesterday|tomorrow)(?: (?:in the )?(?P<part>morning|noon|afternoon|evening|night))?")
def _day(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_day(DAY_OFFSETS[m["day"]], PARTS[m["part"]] if m["part"] else None, ctx)


@rule(r"(?:this (?P<part>morning|afternoon|evening)|(?P<tonight>tonight))")
def _this_part(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_day(0, EVENING if m["tonight"] else PARTS[m["part"]], ctx)


@rule(r"last (?P<part>night|evening)")
def _last_night(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_day(-1, PARTS[m["part"]], ctx)


@rule(r"(?P<n>\d+|[a-z]+) (?P<unit>day|week|month|year)s? ago")
def _ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    count = number(m["n"])
    return units_ago(m["unit"], count, ctx) if count is not None else None


@rule(r"(?:a few days ago|a couple (?:of )?days ago|the other day)")
def _few_days_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return few_days_ago(ctx)


@rule(r"(?:recently|lately|these days|(?:the )?past (?:few days|week))")
def _recently(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return recently(ctx)


@rule(r"(?:a while (?:ago|back)|some time ago|a little while ago)")
def _a_while_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return a_while_ago(ctx)


@rule(r"(?:the weekend|weekend|over the weekend)")
def _bare_weekend(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return bare_weekend(ctx)


@rule(r"(?P<rel>this|last|past|previous|next) (?P<what>week|weekend|[a-z]+day|[a-z]{3,5})")
def _week(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    offset = RELATIVE[m["rel"]]
    if m["what"] == "week":
        return week_window(offset, None, ctx)
    if m["what"] == "weekend":
        return week_window(offset, WEEKEND, ctx)
    if m["what"] in WEEKDAYS:
        return week_window(offset, WEEKDAYS[m["what"]], ctx)
    return None


@rule(r"(?:the )?week before last")
def _week_before_last(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return week_window(-2, None, ctx)


@rule(r"earlier this week")
def _earlier_this_week(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return earlier_this_week(ctx)


@rule(r"(?:on )?(?P<wd>[a-z]+day)")
def _bare_weekday(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    weekday = WEEKDAYS.get(m["wd"])
    return most_recent_weekday(weekday, ctx) if weekday is not None else None


@rule(r"(?P<rel>this|last|past|previous|next) month")
def _month_rel(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_month(RELATIVE[m["rel"]], ctx)


@rule(r"(?P<rel>this|last|past|previous|next) year")
def _year_rel(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_year(RELATIVE[m["rel"]], ctx)


ORDINAL = r"(?:st|nd|rd|th)?"


def _month_date(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    month_number = MONTHS.get(m["mon"])
    day = int(m["d"]) if m["d"] else None
    if month_number is None:
        return None
    if ctx.searching and day is None and not m["y"] and m["mon"] in _AMBIGUOUS_ALONE:
        return None
    return explicit_date(int(m["y"]) if m["y"] else None, month_number, day, ctx)


@rule(rf"(?:in |on )?(?P<mon>[a-z]+)\.? ?(?:(?P<d>\d{{1,2}}){ORDINAL})?,? ?(?P<y>\d{{4}})?")
def _month_day(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return _month_date(m, ctx)


@rule(rf"(?:on )?(?:the )?(?P<d>\d{{1,2}}){ORDINAL} (?:of )?(?P<mon>[a-z]+),? ?(?P<y>\d{{4}})?")
def _day_month(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return _month_date(m, ctx)
