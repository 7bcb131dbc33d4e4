"""Russian time expressions. Words are matched by their stems where Russian declines them (в мае, мая,
май; в среду, среда), after the fold (ё → е, й → и) that text and patterns share."""

from __future__ import annotations

import re

from recall.times.windows import (
    AFTERNOON,
    EVENING,
    MORNING,
    NIGHT,
    WEEKEND,
    Context,
    TimeWindow,
    a_while_ago,
    bare_weekend,
    earlier_this_week,
    explicit_date,
    few_days_ago,
    fold,
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
    "один": 1, "одну": 1, "одна": 1, "одного": 1, "два": 2, "две": 2, "пару": 2, "три": 3, "четыре": 4,
    "пять": 5, "шесть": 6, "семь": 7, "восемь": 8, "девять": 9, "десять": 10, "полтора": 1,
}  # fmt: skip
NUMBER_RE = "|".join(sorted((fold(n) for n in NUMBERS), key=len, reverse=True))
PARTS = {"утром": MORNING, "днем": AFTERNOON, "вечером": EVENING, "ночью": NIGHT}
DAY_OFFSETS = {"сегодня": 0, "вчера": -1, "позавчера": -2, "завтра": 1}
# Stems of the weekday names in every case they take after в/во/на/в прошлую…
WEEKDAY_STEMS = [("понедельник", 0), ("вторник", 1), ("сред", 2), ("четверг", 3), ("пятниц", 4),
                 ("суббот", 5), ("воскресень", 6)]  # fmt: skip
MONTH_STEMS = [("январ", 1), ("феврал", 2), ("март", 3), ("апрел", 4), ("ма", 5), ("июн", 6), ("июл", 7),
               ("август", 8), ("сентябр", 9), ("октябр", 10), ("ноябр", 11), ("декабр", 12)]  # fmt: skip
# this / last / the one before last / next, in the genders and cases they take with неделя, месяц, год.
REL_WORDS = {"эт": 0, "текущ": 0, "прошл": -1, "предыдущ": -1, "позапрошл": -2, "следующ": 1, "будущ": 1}
REL = r"(?P<rel>позапрошл|прошл|предыдущ|эт|текущ|следующ|будущ)(?:ой|ую|ая|ом|ые|ых|им|ий|ого|и|у|о)"


_ON_WEEKDAY = {
    fold(w) for w in ("понедельник", "вторник", "среду", "четверг", "пятницу", "субботу", "воскресенье")
}


def number(text: str | None) -> int | None:
    if not text:
        return 1  # "неделю назад": the unit alone means one
    return int(text) if text.isdigit() else NUMBERS.get(text)


def _stem_index(word: str, stems: list[tuple[str, int]]) -> int | None:
    for stem, index in stems:
        if word.startswith(fold(stem)):
            return index
    return None


def _weekday(word: str) -> int | None:
    return _stem_index(word, WEEKDAY_STEMS)


def _month_number(word: str) -> int | None:
    # "ма" alone would take any word; May is май / мая / мае only.
    if word in (fold("май"), "мая", "мае"):
        return 5
    return _stem_index(word, [s for s in MONTH_STEMS if s[0] != "ма"])


@rule(r"(?P<day>сегодня|вчера|позавчера|завтра)(?: (?P<part>утром|днём|вечером|ночью))?")
def _day(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_day(DAY_OFFSETS[m["day"]], PARTS[m["part"]] if m["part"] else None, ctx)


@rule(r"(?:прошлой ночью|вчера поздно вечером)")
def _last_night(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_day(-1, NIGHT, ctx)


@rule(r"(?:этим|сегодня) (?P<part>утром|вечером)|(?P<tonight>сегодня ночью)")
def _this_part(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_day(0, NIGHT if m["tonight"] else PARTS[m["part"]], ctx)


@rule(rf"(?:(?P<n>\d+|{NUMBER_RE}) )?(?P<unit>дн|день|недел|месяц|год|лет)[а-я]* назад")
def _ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    count = number(m["n"])
    unit = {"дн": "day", "день": "day", "недел": "week", "месяц": "month", "год": "year", "лет": "year"}
    return units_ago(unit[m["unit"]], count, ctx) if count is not None else None


@rule(r"(?:несколько дней назад|пару дней назад|на днях|днями|недавно на днях)")
def _few_days_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return few_days_ago(ctx)


@rule(r"(?:недавно|в последнее время|последнее время|за последние дни|на этих днях)")
def _recently(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return recently(ctx)


@rule(r"(?:некоторое время назад|какое-то время назад|какое то время назад|не так давно|раньше)")
def _a_while_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return a_while_ago(ctx)


@rule(rf"(?:на |в )?{REL} недел(?:е|ю|я)")
def _week(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return week_window(REL_WORDS[m["rel"]], None, ctx)


@rule(rf"(?:на |в )?{REL} выходн(?:ые|ых)")
def _weekend(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return week_window(REL_WORDS[m["rel"]], WEEKEND, ctx)


@rule(r"(?:на |в )?выходн(?:ые|ых)")
def _bare_weekend(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return bare_weekend(ctx)


@rule(rf"(?:во? )?{REL} (?P<wd>[а-я]+)")
def _rel_weekday(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    if ctx.searching and m["wd"] not in _ON_WEEKDAY:
        return None  # в прошлую среду, not в этой среде
    weekday = _weekday(m["wd"])
    return week_window(REL_WORDS[m["rel"]], weekday, ctx) if weekday is not None else None


@rule(r"(?:во? )?(?P<wd>понедельник|вторник|сред[аеуы]|четверг|пятниц[аеуы]|суббот[аеуы]|воскресень[ея])")
def _bare_weekday(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    # Inside a text only the form "on <day>" takes (в среду): в среде is "in the environment".
    if ctx.searching and m["wd"] not in _ON_WEEKDAY:
        return None
    weekday = _weekday(m["wd"])
    return most_recent_weekday(weekday, ctx) if weekday is not None else None


@rule(r"(?:в начале этой недели|в начале недели)")
def _earlier_this_week(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return earlier_this_week(ctx)


@rule(rf"(?:в )?{REL} месяц(?:е|а)?")
def _month_rel(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_month(REL_WORDS[m["rel"]], ctx)


@rule(rf"(?:в )?{REL} год(?:у)?")
def _year_rel(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_year(REL_WORDS[m["rel"]], ctx)


MONTH_FORMS = r"(?:январ|феврал|апрел|июн|июл|сентябр|октябр|ноябр|декабр)[ьяе]|(?:март|август)[ае]?|ма[йяе]"


@rule(rf"(?:в )?(?:(?P<d>\d{{1,2}}) )?(?P<mon>{MONTH_FORMS})(?: (?P<y>\d{{4}})(?: года| г\.?| год)?)?")
def _date(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    month_number = _month_number(m["mon"])
    if month_number is None:
        return None
    return explicit_date(int(m["y"]) if m["y"] else None, month_number, int(m["d"]) if m["d"] else None, ctx)
