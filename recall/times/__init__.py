"""Time expressions → half-open ``[start, end)`` windows in the character's local time zone.

``parse_time_window`` accepts what the original accepted (spec §4.5) and, on top of that, relative
expressions in the eight languages the original speaks, resolved against ``now``:

- ISO tokens: ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``, ``YYYY-MM-DDTHH`` / ``YYYY-MM-DD HH``, and full ISO
  timestamps (floored to their hour; aware values converted to ``tz``). Ranges ``A/B`` and ``A..B`` give the
  union ``[min start, max end)``.
- Days, optionally with a part of the day (morning 05–12, noon 11–14, afternoon 12–18, evening and night
  18–24, small hours 00–05): 昨天晚上, yesterday evening, 昨日の夜, 어제 저녁, вчера вечером, ayer por la
  noche, ontem à noite; last night, 昨晚, ゆうべ, 어젯밤, anoche.
- "N days/weeks/months/years ago": the whole calendar day, ISO week (Monday start), month or year that
  lies N units back (3天前, 3 days ago, 3日前, 3일 전, 3 дня назад, hace 3 días, há 3 dias).
- Weeks (Monday start): this / last / the week before last / next week, their weekends (Saturday 00:00 –
  Monday 00:00) and weekdays (上周三, last Wednesday, 先週の水曜日, 지난주 수요일, в прошлую среду, el
  miércoles pasado, quarta-feira passada); a bare weekday is the most recent one not in the future.
- Months and years: last / this / next month and year, the year before last; a month name without a year
  is the most recent such month not in the future; explicit dates with or without a year.
- Vague: "recently" = the last 7 days up to the end of today; "a few days ago" = the six days before
  today; "a while ago" = 60 days back to 3 days back; "earlier this week" = Monday 00:00 until ``now``.

Each locale's words are one module (``zh``, ``zh_tw``, ``en``, ``ja``, ``ko``, ``ru``, ``es``, ``pt``)
over the shared arithmetic of ``windows``. The whole text is tried first; when it is not an expression by
itself (a caller passed the question: "先週どこに行った?", "¿qué hice la semana pasada?"), the longest
expression found inside it is used (``find_time_expression``).

Why rules rather than a library: ``recognizers-text-suite`` took 2–8 ms per call, resolved "最近" to today
and "recently" to a point, and needs a 2019 alpha; ``dateparser`` reads bare expressions in every locale
but returns a point, found an expression inside a question in only 3 of 6 locales, and read "last
weekend" as "last week" (ARCHITECTURE.md, Languages). The tables answer in microseconds, and each window is
a decision written down here and pinned by tests. Anything not recognised returns None (the caller then
does semantic-only recall).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

# The locale modules register their rules on import, in this order (within a locale the order matters:
# the first rule that matches a whole expression and knows its words answers).
from recall.times import en, es, ja, ko, pt, ru, zh, zh_tw  # noqa: F401
from recall.times.windows import (
    Context,
    Found,
    TimeWindow,
    at,
    month,
    one_day,
    search,
    whole_match,
    year,
)
from recall.times.windows import fold as fold_expression

__all__ = ["Found", "TimeWindow", "find_time_expression", "fold_expression", "parse_time_window"]

_ISO_YEAR = re.compile(r"(\d{4})")
_ISO_MONTH = re.compile(r"(\d{4})-(\d{2})")
_ISO_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_ISO_HOUR = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2})")
_ISO_FULL = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}.*")


def _parse_iso(token: str, tz: tzinfo) -> TimeWindow | None:
    from datetime import date

    try:
        if m := _ISO_YEAR.fullmatch(token):
            return year(int(m[1]), tz)
        if m := _ISO_MONTH.fullmatch(token):
            return month(int(m[1]), int(m[2]), tz)
        if m := _ISO_DAY.fullmatch(token):
            return one_day(date(int(m[1]), int(m[2]), int(m[3])), tz)
        if m := _ISO_HOUR.fullmatch(token):
            start = at(date(int(m[1]), int(m[2]), int(m[3])), int(m[4]), tz) if int(m[4]) < 24 else None
            return TimeWindow(start, start + timedelta(hours=1)) if start else None
        if _ISO_FULL.fullmatch(token):
            moment = datetime.fromisoformat(token)
            moment = moment.astimezone(tz) if moment.tzinfo else moment.replace(tzinfo=tz)
            start = at(moment.date(), moment.hour, tz)
            return TimeWindow(start, start + timedelta(hours=1))
    except ValueError:  # month 13, day 32, malformed timestamp
        return None
    return None


_RANGE_SPLIT = re.compile(r"\.\.|/")
_FILLER = re.compile(r"^(?:in|on|during|at|from|since|around)\s+|[\s?？.。!！,，¿¡]+$|^[¿¡]+")


def _normalise(expr: str) -> str:
    # Drop a leading preposition and the question's punctuation; "in may" is handled by its own rule too.
    return _FILLER.sub("", fold_expression(expr))


def _parse_single(expr: str, ctx: Context) -> TimeWindow | None:
    token = expr.strip()
    if not token:
        return None
    iso = _parse_iso(token, ctx.tz)
    if iso is not None or (token[:4].isdigit() and "-" in token):
        return iso  # an ISO-shaped token that failed validation is not retried as language
    return whole_match(_normalise(token), ctx)


def _context(now: datetime, tz: tzinfo | str, *, searching: bool = False) -> Context:
    zone = ZoneInfo(tz) if isinstance(tz, str) else tz
    local_now = now.astimezone(zone) if now.tzinfo else now.replace(tzinfo=zone)
    return Context(local_now, zone, searching)


def find_time_expression(text: str, *, now: datetime, tz: tzinfo | str) -> Found | None:
    """The longest time expression inside ``text`` (its span as written, and its window), or None.

    Inside a text, words that are ordinary words too ("may", "segunda") count only with a date around them.
    """
    if not text or not text.strip():
        return None
    return search(text, _context(now, tz, searching=True))


def parse_time_window(expr: str, *, now: datetime, tz: tzinfo | str) -> TimeWindow | None:
    """Parse an ISO token, an ISO range or a relative expression (whole, or found inside a question);
    None when not understood."""
    ctx = _context(now, tz)
    if not expr or not expr.strip():
        return None
    parts = _RANGE_SPLIT.split(expr.strip())
    if len(parts) == 1:
        window = _parse_single(parts[0], ctx)
    elif len(parts) == 2:
        first, second = _parse_single(parts[0], ctx), _parse_single(parts[1], ctx)
        window = first.union(second) if first is not None and second is not None else None
    else:
        window = None
    if window is not None or _ISO_SHAPED.match(expr.strip()):
        return window
    found = find_time_expression(expr, now=now, tz=tz)
    return found.window if found is not None else None


# A text that starts like an ISO token is one (valid or not): it is never searched for words.
_ISO_SHAPED = re.compile(r"\d{4}(?:-|/|\.\.|$)")
