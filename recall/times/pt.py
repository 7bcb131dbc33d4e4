"""Portuguese time expressions (Brazil and Portugal; accents folded alike in text and patterns)."""

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
    "um": 1, "uma": 1, "dois": 2, "duas": 2, "três": 3, "quatro": 4, "cinco": 5, "seis": 6, "sete": 7,
    "oito": 8, "nove": 9, "dez": 10, "onze": 11, "doze": 12,
})  # fmt: skip
MONTHS = folded_keys({
    "janeiro": 1, "fevereiro": 2, "março": 3, "abril": 4, "maio": 5, "junho": 6, "julho": 7, "agosto": 8,
    "setembro": 9, "outubro": 10, "novembro": 11, "dezembro": 12,
})  # fmt: skip
WEEKDAYS = folded_keys({"segunda": 0, "terça": 1, "quarta": 2, "quinta": 3, "sexta": 4, "sábado": 5,
                        "domingo": 6})  # fmt: skip
PARTS = folded_keys({"manhã": MORNING, "meio-dia": NOON, "tarde": AFTERNOON, "noite": NIGHT})
DAY_OFFSETS = folded_keys({"hoje": 0, "ontem": -1, "anteontem": -2, "amanhã": 1})
UNITS = folded_keys({"dia": "day", "semana": "week", "mes": "month", "mês": "month", "meses": "month",
                     "ano": "year"})  # fmt: skip
PAST = r"(?:passad[oa]|anterior)"


def number(text: str) -> int | None:
    return int(text) if text.isdigit() else NUMBERS.get(text)


@rule(
    r"(?P<day>hoje|ontem|anteontem|amanhã)(?: (?:de|à|a|pela|na) (?P<part>manhã|tarde|noite)|"
    r" ao (?P<noon>meio-dia))?"
)
def _day(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    part = PARTS[m["part"]] if m["part"] else NOON if m["noon"] else None
    return relative_day(DAY_OFFSETS[m["day"]], part, ctx)


@rule(r"(?:esta|nesta|hoje à) (?P<part>manhã|tarde|noite)")
def _this_part(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_day(0, EVENING if m["part"] == "noite" else PARTS[m["part"]], ctx)


@rule(
    r"(?:há |faz )(?P<n>\d+|[a-z]+) (?P<unit>dias?|semanas?|m[eê]s(?:es)?|anos?)(?: atrás)?"
    r"|(?P<n2>\d+|[a-z]+) (?P<unit2>dias?|semanas?|m[eê]s(?:es)?|anos?) atrás"
)
def _ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    count = number(m["n"] or m["n2"])
    word = m["unit"] or m["unit2"]
    unit = "mes" if word.startswith("mes") else word.rstrip("s")
    return units_ago(UNITS[unit], count, ctx) if count is not None else None


@rule(r"(?:há (?:uns|alguns|poucos) dias|(?:uns|alguns) dias atrás|outro dia|no outro dia|esses dias atrás)")
def _few_days_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return few_days_ago(ctx)


@rule(r"(?:recentemente|ultimamente|esses dias|estes dias|nos últimos dias|há pouco tempo|faz pouco tempo)")
def _recently(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return recently(ctx)


@rule(
    r"(?:há (?:um )?tempo|um tempo atrás|há algum tempo|faz (?:um )?tempo|algum tempo atrás"
    r"|há (?:umas|algumas) semanas)"
)
def _a_while_ago(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return a_while_ago(ctx)


@rule(
    rf"(?:n?a |d?a )?semana (?P<last>{PAST}|retrasada)|(?:n?esta|n?essa) semana"
    rf"|(?:na )?próxima semana"
    rf"|(?:na )?semana que vem|(?:na |a )?última semana"
)
def _week(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    text = m.group()
    if m["last"]:
        return week_window(-2 if m["last"] == "retrasada" else -1, None, ctx)
    if "ultima" in text:
        return week_window(-1, None, ctx)
    if "proxima" in text or "que vem" in text:
        return week_window(1, None, ctx)
    return week_window(0, None, ctx)


@rule(
    rf"(?:n?o )?(?P<last_first>último )?fim de semana(?: (?P<last>{PAST}))?|(?:n?este|n?esse) fim de semana"
)
def _weekend(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    if m["last"] or m["last_first"]:
        return week_window(-1, WEEKEND, ctx)
    if "est" in m.group() or "ess" in m.group():
        return week_window(0, WEEKEND, ctx)
    return bare_weekend(ctx)


@rule(
    rf"(?:n?[oa] |n?a última |n?o último )?(?P<wd>{alternation(WEEKDAYS)})(?:-feira| feira)?"
    rf"(?: (?P<last>{PAST}))?"
)
def _weekday(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    weekday = WEEKDAYS[m["wd"]]
    text = m.group()
    # Inside a text, segunda / terça … quinta / sexta alone are also ordinals ("a segunda vez").
    named = "feira" in text or m["last"] or text.startswith(("na ", "no ", "nao ")) or weekday >= 5
    if ctx.searching and not named:
        return None
    if m["last"] or "ultim" in text:
        return week_window(-1, weekday, ctx)
    return most_recent_weekday(weekday, ctx)


@rule(r"(?:no início da semana|no começo da semana|no início desta semana|no começo desta semana)")
def _earlier_this_week(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return earlier_this_week(ctx)


@rule(
    rf"(?:n?o )?(?:mês (?P<last>{PAST})|último mês)|(?P<this>n?este|n?esse) mês"
    rf"|(?:n?o )?(?:próximo mês|mês que vem)"
)
def _month_rel(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    if m["last"] or "ultimo" in m.group():
        return relative_month(-1, ctx)
    return relative_month(0 if m["this"] else 1, ctx)


@rule(
    rf"(?:n?o )?ano (?P<last>{PAST})|(?:n?o )?ano (?P<before>retrasado)|(?P<this>n?este|n?esse) ano"
    rf"|(?:n?o )?(?:próximo ano|ano que vem)"
)
def _year_rel(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return relative_year(-1 if m["last"] else -2 if m["before"] else 0 if m["this"] else 1, ctx)


@rule(rf"(?:em |no dia )?(?:(?P<d>\d{{1,2}}) de )?(?P<mon>{alternation(MONTHS)})(?: de (?P<y>\d{{4}}))?")
def _date(m: re.Match[str], ctx: Context) -> TimeWindow | None:
    return explicit_date(
        int(m["y"]) if m["y"] else None, MONTHS[m["mon"]], int(m["d"]) if m["d"] else None, ctx
    )
