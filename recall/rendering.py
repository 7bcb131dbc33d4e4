"""The recall block the chat model reads (reference §4.6): a localised Markdown list with budgets.

``render_recall_markdown`` works on the ``/query_memory`` result rows, so the chat side can call it on
what it received and the endpoint can serve it as ``?format=markdown``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.utils import timezone

from nekomem.language.counting import count_tokens, truncate_tokens
from recall import locale

ENTRY_TOKENS = 400  # per-entry text, truncated (not dropped)
LINE_OVERHEAD_TOKENS = 40  # numbering, label, date and age around the text
SEPARATOR_TOKENS = 1
BLOCK_TOKENS = 2204  # the whole block, header included


def _strings(language: str) -> dict[str, Any]:
    return locale.strings(language)


def _anchor(row: dict[str, Any]) -> datetime | None:
    # The date uses the event anchor when there is one, else when it was recorded.
    for key in ("event_start_at", "created_at"):
        value = row.get(key)
        if isinstance(value, datetime):
            return value
        if isinstance(value, str) and value:
            try:
                return datetime.fromisoformat(value)
            except ValueError:
                continue
    return None


def _when(row: dict[str, Any], language: str, now: datetime) -> str:
    anchor = _anchor(row)
    if anchor is None:
        return ""
    strings = _strings(language)
    if timezone.is_naive(anchor):
        anchor = timezone.make_aware(anchor)
    local, today = timezone.localtime(anchor), timezone.localtime(now)
    days = (today.date() - local.date()).days
    if days == 0:
        age = strings["today"]
    elif days > 0:
        age = locale.counted(language, "days_ago", days)
    else:
        age = locale.counted(language, "in_days", -days)
    return f"({local:%Y-%m-%d}, {age})"


def _label(row: dict[str, Any], language: str) -> str:
    strings = _strings(language)
    tier = strings["tier"].get(row.get("tier"), str(row.get("tier") or ""))
    entity = strings["entity"].get(row.get("entity"), str(row.get("entity") or ""))
    return f"[{tier}/{entity}]" if entity else f"[{tier}]"


def render_recall_markdown(
    rows: Sequence[dict[str, Any]],
    *,
    language: str,
    now: datetime | None = None,
    query_and_time: bool = False,
    failed: bool = False,
) -> str:
    """Numbered lines ``1. [tier/entity] text  (YYYY-MM-DD, N days ago)`` under a header.

    Memory text is never translated. Entries are cut to ``ENTRY_TOKENS``; lines that do not fit the block
    are dropped from the tail. No rows → the "no results" text, or, when a query and a time were both
    given and the request succeeded, a hint to loosen one of them.
    """
    strings = _strings(language)
    now = now or timezone.now()
    if not rows:
        return strings["recall_loosen"] if query_and_time and not failed else strings["recall_none"]
    header = strings["recall_header"]
    budget = BLOCK_TOKENS - count_tokens(header) - SEPARATOR_TOKENS
    lines: list[str] = []
    for row in rows:
        text = truncate_tokens(" ".join(str(row.get("text") or "").split()), ENTRY_TOKENS)
        line = f"{len(lines) + 1}. {_label(row, language)} {text}  {_when(row, language, now)}".rstrip()
        cost = max(count_tokens(line), count_tokens(text) + LINE_OVERHEAD_TOKENS) + SEPARATOR_TOKENS
        if cost > budget:
            break  # dropped from the tail: every later line would be numbered after a gap
        budget -= cost
        lines.append(line)
    if not lines:
        return strings["recall_none"]
    return "\n".join([header, *lines])
