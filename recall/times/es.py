"""Spanish time expressions (written with accents; text and patterns are folded alike, so "miercoles"
typed without them is read too)."""

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
    alternation,
    bare_weekend,
    earlier_this_week,
    explicit_date,
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

NUMBERS = folded_keys({
    "un": 1, "una": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7,
    "ocho": 8, "nueve": 9, "diez": 10, "once": 11, "doce": 12,
})  # fmt: skip
MONTHS = folded_keys({
    "enero": 1, "febrero": 2, "marzo": 3, "abril": 4, "mayo": 5, "junio": 6, "julio": 7, "agosto": 8,
    "septiembre": 9, "setiembre": 9, "octubre": 10, "noviembre": 11, "diciembre": 12,
})  # fmt: skip
WEEKDAYS = folded_keys({"lunes": 0, "martes": 1, "miércoles": 2, "jueves": 3, "viernes": 4, "sábado": 5,
                        "domingo": 6})  # fmt: skip
PARTS = folded_keys({"mañana": MORNING, "mediodía": NOON, "tarde": AFTERNOON, "noche": NIGHT})
DAY_OFFSETS = folded_keys({"hoy": 0, "ayer": -1, "anteayer": -2, "antier": -2, "antes de ayer": -2,
                           "mañana": 1})  # fmt: skip
UNITS = folded_keys({"día": "day", "dia": "day", "semana": "week", "mes": "month", "meses": "month",
                     "año": "year"})  # fmt: skip
PAST = r"(?:pasad[oa]|anterior)"


def number(text: str) -> int | None:
    return int(text) if text.isdigit() else NUMBERS.get(text)


@rule(
    r"(?P<day>hoy|ayer|anteayer|antier|antes de ayer)(?: (?:por|en|a) la (?P<part>mañana|tarde|noche)|"
    r" al (?P<noon>mediodía))?"
)
def _day(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    part = PARTS[m["part"]] if m["part"] else NOON if m["noon"] else None
    return relative_day(DAY_OFFSETS[m["day"]], part, ctx)


@rule(r"(?:(?P<tonight>esta noche)|esta (?P<part>mañana|tarde))")
def _this_part(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_day(0, EVENING if m["tonight"] else PARTS[m["part"]], ctx)


@rule(r"anoche")
def _last_night(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_day(-1, NIGHT, ctx)


@rule(rf"hace (?P<n>\d+|{alternation(NUMBERS)}) (?P<unit>días?|semanas?|mes(?:es)?|años?)")
def _ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    count = number(m["n"])
    unit = m["unit"].rstrip("s") if not m["unit"].startswith("mes") else "mes"
    return units_ago(UNITS[unit], count, ctx) if count is not None else None


@rule(r"(?:hace (?:unos|algunos|pocos) días|el otro día|hace un par de días|los otros días)")
def _few_days_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return few_days_ago(ctx)


@rule(r"(?:recientemente|últimamente|estos días|estos últimos días|en los últimos días|hace poco)")
def _recently(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return recently(ctx)


@rule(r"(?:hace (?:un )?tiempo|hace un rato largo|hace algún tiempo|hace (?:unas|algunas) semanas)")
def _a_while_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return a_while_ago(ctx)


@rule(
    rf"(?:(?:en |durante )?(?:la|esta) semana (?P<last>{PAST}|antepasada)|"
    rf"(?:en |durante )?(?P<this>esta) semana|"
    rf"la (?P<next>próxima) semana|la semana que viene)"
)
def _week(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    if m["last"]:
        return week_window(-2 if m["last"] == "antepasada" else -1, None, ctx)
    return week_window(0 if m["this"] else 1, None, ctx)


@rule(
    rf"(?:el )?fin de semana(?: (?P<last>{PAST}))?|(?P<this>este) (?:fin de semana|finde)|"
    rf"el (?:finde|fin de semana) (?P<last2>{PAST})|(?:el )?finde"
)
def _weekend(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    if m["last"] or m["last2"]:
        return week_window(-1, WEEKEND, ctx)
    if m["this"]:
        return week_window(0, WEEKEND, ctx)
    return bare_weekend(ctx)


@rule(rf"(?:el )?(?P<wd>{alternation(WEEKDAYS)})(?: (?P<last>{PAST})| de la semana (?P<last2>{PAST}))?")
def _weekday(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    weekday = WEEKDAYS[m["wd"]]
    if m["last"] or m["last2"]:
        return week_window(-1, weekday, ctx)
    return most_recent_weekday(weekday, ctx)


@rule(r"(?:a principios de (?:esta )?semana|al principio de (?:la|esta) semana)")
def _earlier_this_week(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return earlier_this_week(ctx)


@rule(rf"(?:(?:el )?mes (?P<last>{PAST})|(?P<this>este) mes|el (?:próximo) mes|el mes que viene)")
def _month_rel(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_month(-1 if m["last"] else 0 if m["this"] else 1, ctx)


@rule(
    rf"(?:(?:el )?año (?P<last>{PAST})|(?:el )?año (?P<before>antepasado)|(?P<this>este) año|"
    rf"el (?:próximo) año|"
    rf"el año que viene)"
)
def _year_rel(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_year(-1 if m["last"] else -2 if m["before"] else 0 if m["this"] else 1, ctx)


@rule(rf"(?:en |el )?(?:(?P<d>\d{{1,2}}) de )?(?P<mon>{alternation(MONTHS)})(?: (?:de|del) (?P<y>\d{{4}}))?")
def _date(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return explicit_date(
        int(m["y"]) if m["y"] else None, MONTHS[m["mon"]], int(m["d"]) if m["d"] else None, ctx
    )
