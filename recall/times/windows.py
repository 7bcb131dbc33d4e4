"""Shared window arithmetic and the rule registry that every locale module of time expressions feeds.

A locale module (``zh``, ``zh_tw``, ``en``, ``ja``, ``ko``, ``ru``, ``es``, ``pt``) only says which words
mean which window; the calendar work (wall-clock days, ISO weeks starting on Monday, month and year
shifts, "the most recent such month") lives here once, so a window means the same in every language.

Text and patterns go through the same fold before they meet (``fold``): NFKC, lower case, diacritics
removed (``miércoles`` → ``miercoles``, ``май`` → ``маи``) and the few Traditional characters of the
time vocabulary mapped to Simplified (``上週`` → ``上周``). A pattern is written as a native speaker
writes the word and folded when it is registered.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from typing import TypeVar

from nekomem.language.normalize import fold_diacritics


@dataclass(frozen=True)
class TimeWindow:
    """A half-open interval ``[start, end)`` of aware datetimes."""

    start: datetime
    end: datetime

    def contains(self, moment: datetime) -> bool:
        return self.start <= moment < self.end

    def overlaps(self, start: datetime, end: datetime) -> bool:
        """Whether the closed event span ``[start, end]`` touches this window."""
        return start < self.end and end >= self.start

    def union(self, other: TimeWindow) -> TimeWindow:
        return TimeWindow(min(self.start, other.start), max(self.end, other.end))


# ---------------------------------------------------------------------------------------------------------
# Calendar helpers (wall-clock construction, so DST days are 23 or 25 hours long as they should be)
# ---------------------------------------------------------------------------------------------------------

# Parts of the day → (start hour, end hour) on that day; hour 24 is the next midnight.
MORNING = (5, 12)
NOON = (11, 14)
AFTERNOON = (12, 18)
EVENING = (18, 24)
NIGHT = (18, 24)
SMALL_HOURS = (0, 5)

WEEKEND = -1  # the weekday index that means Saturday 00:00 – Monday 00:00


def at(day: date, hour: int, tz: tzinfo) -> datetime:
    """Local wall-clock ``hour`` on ``day``; hour 24 is the next midnight."""
    if hour == 24:
        day, hour = day + timedelta(days=1), 0
    return datetime(day.year, day.month, day.day, hour, tzinfo=tz)


def days(first: date, end: date, tz: tzinfo) -> TimeWindow:
    """Whole days ``first`` up to (not including) ``end``."""
    return TimeWindow(at(first, 0, tz), at(end, 0, tz))


def one_day(day: date, tz: tzinfo) -> TimeWindow:
    return days(day, day + timedelta(days=1), tz)


def month(year: int, month_number: int, tz: tzinfo) -> TimeWindow:
    following = date(year + 1, 1, 1) if month_number == 12 else date(year, month_number + 1, 1)
    return days(date(year, month_number, 1), following, tz)


def year(number: int, tz: tzinfo) -> TimeWindow:
    return days(date(number, 1, 1), date(number + 1, 1, 1), tz)


def week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def shift_month(year_number: int, month_number: int, delta: int) -> tuple[int, int]:
    index = year_number * 12 + (month_number - 1) + delta
    return index // 12, index % 12 + 1


@dataclass(frozen=True)
class Context:
    now: datetime
    tz: tzinfo
    searching: bool = False  # looking inside a longer text: ambiguous single words are not taken

    @property
    def today(self) -> date:
        return self.now.date()


def day_part(day: date, hours: tuple[int, int] | None, ctx: Context) -> TimeWindow:
    if hours is None:
        return one_day(day, ctx.tz)
    return TimeWindow(at(day, hours[0], ctx.tz), at(day, hours[1], ctx.tz))


def relative_day(offset: int, hours: tuple[int, int] | None, ctx: Context) -> TimeWindow:
    return day_part(ctx.today + timedelta(days=offset), hours, ctx)


def units_ago(unit: str, count: int, ctx: Context) -> TimeWindow:
    """The whole calendar day, ISO week (Monday start), month or year that lies ``count`` units back."""
    if unit == "day":
        return one_day(ctx.today - timedelta(days=count), ctx.tz)
    if unit == "week":
        first = week_start(ctx.today) - timedelta(weeks=count)
        return days(first, first + timedelta(days=7), ctx.tz)
    if unit == "month":
        return month(*shift_month(ctx.today.year, ctx.today.month, -count), ctx.tz)
    return year(ctx.today.year - count, ctx.tz)


def week_window(offset: int, weekday: int | None, ctx: Context) -> TimeWindow:
    """The ISO week ``offset`` weeks from this one; a weekday of it, or its weekend (``WEEKEND``)."""
    first = week_start(ctx.today) + timedelta(weeks=offset)
    if weekday is None:
        return days(first, first + timedelta(days=7), ctx.tz)
    if weekday == WEEKEND:
        return days(first + timedelta(days=5), first + timedelta(days=7), ctx.tz)
    return one_day(first + timedelta(days=weekday), ctx.tz)


def most_recent_weekday(weekday: int, ctx: Context) -> TimeWindow:
    """That weekday, today included, never in the future."""
    return one_day(ctx.today - timedelta(days=(ctx.today.weekday() - weekday) % 7), ctx.tz)


def bare_weekend(ctx: Context) -> TimeWindow:
    """The weekend, said alone: the one in progress on Saturday and Sunday, otherwise the one just past."""
    return week_window(0 if ctx.today.weekday() >= 5 else -1, WEEKEND, ctx)


def relative_month(offset: int, ctx: Context) -> TimeWindow:
    return month(*shift_month(ctx.today.year, ctx.today.month, offset), ctx.tz)


def relative_year(offset: int, ctx: Context) -> TimeWindow:
    return year(ctx.today.year + offset, ctx.tz)


def recently(ctx: Context) -> TimeWindow:
    """Recently: the last 7 days up to the end of today."""
    return days(ctx.today - timedelta(days=7), ctx.today + timedelta(days=1), ctx.tz)


def few_days_ago(ctx: Context) -> TimeWindow:
    """A few days ago: the six days before today."""
    return days(ctx.today - timedelta(days=6), ctx.today, ctx.tz)


def a_while_ago(ctx: Context) -> TimeWindow:
    """A while ago, some time back: from 60 days back to 3 days back. Wide on purpose: a window is a
    hard filter on the pools, and people say it of anything from a fortnight to a couple of months."""
    return days(ctx.today - timedelta(days=60), ctx.today - timedelta(days=2), ctx.tz)


def earlier_this_week(ctx: Context) -> TimeWindow:
    return TimeWindow(at(week_start(ctx.today), 0, ctx.tz), ctx.now)


def recent_month(month_number: int, ctx: Context) -> TimeWindow:
    """The most recent such month not in the future (this year's if it has begun, else last year's)."""
    year_number = ctx.today.year if month_number <= ctx.today.month else ctx.today.year - 1
    return month(year_number, month_number, ctx.tz)


def recent_date(month_number: int, day: int, ctx: Context) -> TimeWindow | None:
    # Walk back a year at a time; eight years always reach a leap year for 29 February.
    for year_number in range(ctx.today.year, ctx.today.year - 9, -1):
        try:
            candidate = date(year_number, month_number, day)
        except ValueError:
            continue
        if candidate <= ctx.today:
            return one_day(candidate, ctx.tz)
    return None


def explicit_date(
    year_number: int | None, month_number: int, day: int | None, ctx: Context
) -> TimeWindow | None:
    """A month (and day) with or without a year; without one, the most recent such date not in the future."""
    if not 1 <= month_number <= 12:
        return None
    if day is None:
        return (
            month(year_number, month_number, ctx.tz)
            if year_number is not None
            else recent_month(month_number, ctx)
        )
    if year_number is None:
        return recent_date(month_number, day, ctx)
    try:
        return one_day(date(year_number, month_number, day), ctx.tz)
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------------------
# Folding (text and patterns alike)
# ---------------------------------------------------------------------------------------------------------

# Traditional forms of the characters the time vocabulary uses, folded to the Simplified ones the rules
# are written with. A short explicit table rather than a whole-text zhconv pass: zhconv would also turn a
# Japanese 週 or 時間 into Chinese, and every locale's text goes through this fold.
_TRADITIONAL_TIME_CHARS = str.maketrans(
    {"週": "周", "這": "这", "個": "个", "禮": "礼", "幾": "几", "兩": "两", "號": "号", "後": "后",
     "間": "间", "時": "时", "陣": "阵", "來": "来", "淩": "凌", "裡": "里", "裏": "里", "點": "点"}
)  # fmt: skip


def fold(text: str) -> str:
    """NFKC, lower case, diacritics off, Traditional time characters to Simplified, spaces collapsed."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = fold_diacritics(text).translate(_TRADITIONAL_TIME_CHARS)
    return " ".join(text.split())


def fold_with_offsets(text: str) -> tuple[str, list[int]]:
    """``fold(text)`` and, for each of its characters, the index of the character of ``text`` it came
    from (so a span found in the folded text is cut from the text as written). Folded one character at a
    time: the same result as ``fold`` for any text NFKC leaves in its composed form."""
    out: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if char.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                origin.append(index)
            continue
        piece = fold_diacritics(unicodedata.normalize("NFKC", char).lower()).translate(
            _TRADITIONAL_TIME_CHARS
        )
        out.extend(piece)
        origin.extend([index] * len(piece))
    if out and out[-1] == " ":
        out.pop()
        origin.pop()
    return "".join(out), origin


def fold_pattern(pattern: str) -> str:
    """The fold of ``fold`` minus lower-casing (which would turn ``(?P<`` and ``\\S`` into other
    syntax): patterns are written in lower case."""
    return fold_diacritics(unicodedata.normalize("NFKC", pattern)).translate(_TRADITIONAL_TIME_CHARS)


V = TypeVar("V")


def folded_keys(table: Mapping[str, V]) -> dict[str, V]:
    """A vocabulary table keyed by the folded form of its words (lookups use matched, folded text)."""
    return {fold(key): value for key, value in table.items()}


def alternation(words: Iterable[str]) -> str:
    """A regex alternation of the folded words, longest first (so 上上个 is tried before 上)."""
    return "|".join(re.escape(w) for w in sorted({fold(w) for w in words}, key=len, reverse=True))


# ---------------------------------------------------------------------------------------------------------
# Rule registry
# ---------------------------------------------------------------------------------------------------------

Handler = Callable[[re.Match[str], Context], "TimeWindow | None"]

# Letters and digits that continue a word in the scripts that separate words with spaces: an expression
# found inside a text must not start or end in the middle of one (the "may" of "mayor", the 3 of "13月").
_WORD_CHAR = r"0-9a-z\u00c0-\u024f\u0400-\u04ff"


@dataclass(frozen=True)
class Rule:
    whole: re.Pattern[str]  # the whole expression
    inside: re.Pattern[str]  # the same words inside a longer text
    handler: Handler


RULES: list[Rule] = []


def rule(pattern: str) -> Callable[[Handler], Handler]:
    """Register ``handler`` for texts ``pattern`` matches (written in native spelling; folded here)."""
    folded = fold_pattern(pattern)

    def register(handler: Handler) -> Handler:
        inside = rf"(?<![{_WORD_CHAR}])(?:{folded})(?![{_WORD_CHAR}])"
        RULES.append(Rule(re.compile(folded), re.compile(inside), handler))
        return handler

    return register


def whole_match(text: str, ctx: Context) -> TimeWindow | None:
    """The first rule that matches all of the folded ``text`` and recognises its words."""
    # Several patterns are deliberately loose ("last <word>", "<word> <day>"); a handler that does not
    # recognise its words returns None and the next rule gets a try.
    for entry in RULES:
        if (match := entry.whole.fullmatch(text)) and (window := entry.handler(match, ctx)) is not None:
            return window
    return None


@dataclass(frozen=True)
class Found:
    """A time expression found inside a text: where it is (``text[start:end]``) and its window."""

    text: str
    start: int
    end: int
    window: TimeWindow


def search(text: str, ctx: Context) -> Found | None:
    """The longest expression any rule recognises inside ``text`` (earliest on a tie)."""
    folded, origin = fold_with_offsets(text)
    best: tuple[int, int, re.Match[str], TimeWindow] | None = None
    for entry in RULES:
        for match in entry.inside.finditer(folded):
            if not match.group().strip():
                continue
            window = entry.handler(match, ctx)
            if window is None:
                continue
            if best is None or (len(match.group()), -match.start()) > (best[0], best[1]):
                best = (len(match.group()), -match.start(), match, window)
    if best is None:
        return None
    match = best[2]
    # Trailing spaces a loose pattern took belong to the text around the expression.
    last = match.start() + len(match.group().rstrip()) - 1
    start, end = origin[match.start()], origin[last] + 1
    return Found(text[start:end], start, end, best[3])
