"""Memory-browser pages of the recent layer.

``/memory_browser`` is the older single page (every character's window and the two switches);
``/browse/<name>/recent/`` is the layer's page in the browser frame: the window editor for one
character and the raw time-indexed log, one day at a time. Both pages share the editor's script.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from nekomem.browser.access import browser_page
from nekomem.browser.layer_views import character_or_404
from nekomem.language.messages import message_text
from recent.models import RawMessage
from recent.selectors import (
    raw_log_first_from,
    raw_log_forget_preview,
    raw_log_last_before,
    raw_log_last_timestamp,
    raw_log_rows,
    recent_window_count,
    theater_capsule_list,
)
from recent.services import RangeRefused, raw_log_forget, raw_log_range_check
from recent.services.theater import theater_capsule_delete

RAW_ROWS_PER_PAGE = 100


def _api_root() -> str:
    return reverse("api-review-config").removesuffix("review_config")


@require_GET
def memory_browser(request: HttpRequest) -> HttpResponse:
    return render(request, "memory_browser.html", {"api_root": _api_root()})


@dataclass(frozen=True)
class RawRow:
    """One raw-log row as the page shows it."""

    timestamp: datetime
    session_id: str
    type: str
    text: str


def _raw_row(row: RawMessage) -> RawRow:
    try:
        message = json.loads(row.message)
    except ValueError:
        message = None
    if not isinstance(message, dict):  # shown as stored rather than hidden
        return RawRow(row.timestamp, row.session_id, "?", row.message)
    data = message.get("data")
    content = data.get("content") if isinstance(data, dict) else None
    return RawRow(row.timestamp, row.session_id, str(message.get("type", "?")), message_text(content))


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def _requested_day(request: HttpRequest, character_id: int) -> date:
    """The ``day`` asked for; by default the last day with a log (today when the log is empty)."""
    asked = request.GET.get("day", "").strip()
    if asked:
        try:
            return date.fromisoformat(asked)
        except ValueError:
            messages.error(request, f"日期无效 Invalid date: {asked!r} (YYYY-MM-DD)")
    last = raw_log_last_timestamp(character_id=character_id)
    return timezone.localdate(last) if last is not None else timezone.localdate()


@require_GET
@browser_page
def recent_page(request: HttpRequest, name: str) -> HttpResponse:
    character = character_or_404(name)
    day = _requested_day(request, character.pk)
    every_day = request.GET.get("all") == "1"
    text = request.GET.get("q", "").strip()
    start, end = _day_start(day), _day_start(day + timedelta(days=1))
    rows = raw_log_rows(
        character_id=character.pk,
        start=None if every_day else start,
        end=None if every_day else end,
        text=text,
    )
    page = Paginator(rows, RAW_ROWS_PER_PAGE).get_page(request.GET.get("page"))
    before = raw_log_last_before(character_id=character.pk, before=start)
    after = raw_log_first_from(character_id=character.pk, start=end)
    return render(
        request,
        "browser/recent/page.html",
        {
            "character": character,
            "active_tab": "recent",
            "api_root": _api_root(),
            "window_size": recent_window_count(character_id=character.pk),
            "day": day,
            "every_day": every_day,
            "text": text,
            "page": page,
            "raw_rows": [_raw_row(row) for row in page.object_list],
            "previous_day": timezone.localdate(before) if before else None,
            "next_day": timezone.localdate(after) if after else None,
            "capsules": theater_capsule_list(character_id=character.pk),
        },
    )


@require_POST
@browser_page
def theater_capsule_forget(request: HttpRequest, name: str, capsule_id: int) -> HttpResponse:
    """Delete a capsule the way ``theater/forget`` does: its whole story, with a fresh marker."""
    character = character_or_404(name)
    removed = theater_capsule_delete(character_id=character.pk, capsule_id=capsule_id)
    messages.success(request, f"已删除 Removed {removed.removed_recent}")
    return redirect("browser-recent", name=character.name)


def _range_asked(data: QueryDict) -> tuple[datetime, datetime]:
    """The browser's ``datetime-local`` pair, read in the server's time zone (raises RangeRefused)."""
    try:
        start, end = (
            timezone.make_aware(datetime.fromisoformat(data.get(key, "").strip())) for key in ("start", "end")
        )
    except ValueError:
        raise RangeRefused("start and end must be dates and times (YYYY-MM-DDTHH:MM)") from None
    return raw_log_range_check(start=start, end=end)


@require_http_methods(["GET", "POST"])
@browser_page
def raw_forget(request: HttpRequest, name: str) -> HttpResponse:
    """GET: a preview of the raw turns a range would forget; POST: forget them, and say what went."""
    character = character_or_404(name)
    try:
        start, end = _range_asked(request.POST if request.method == "POST" else request.GET)
    except RangeRefused as exc:
        messages.error(request, f"未修改 Nothing changed: {exc}")
        return redirect("browser-recent", name=character.name)
    if request.method == "POST":
        forgotten = raw_log_forget(character_id=character.pk, start=start, end=end)
        messages.success(request, f"已忘记 Forgotten: {forgotten.summary() or 0}")
        return redirect("browser-recent", name=character.name)
    count, turns = raw_log_forget_preview(character_id=character.pk, start=start, end=end)
    return render(
        request,
        "browser/recent/forget.html",
        {
            "character": character,
            "active_tab": "recent",
            "start": start,
            "end": end,
            "start_value": timezone.localtime(start).strftime("%Y-%m-%dT%H:%M:%S"),
            "end_value": timezone.localtime(end).strftime("%Y-%m-%dT%H:%M:%S"),
            "count": count,
            "turns": turns,
        },
    )
