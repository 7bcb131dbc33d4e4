from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, F, Max, Min, Q, QuerySet

from nekomem.characters.language import character_language
from nekomem.characters.models import Character
from nekomem.language.messages import message_text
from nekomem.language.resolution import master_display_name
from nekomem.language.tables import load_locale_tables
from nekomem.statements import SelectColumns, column, database, select_columns, select_rows, table
from recent.messages import message_text as history_message_text  # noqa: F401  re-exported: scoped_history parses with it
from recent.messages import parse_history  # noqa: F401  re-exported: other layers read a HistoryRequest with it
from recent.models import RawMessage, RecentMessage, TheaterCapsule


def recent_window(*, character_id: int) -> list[RecentMessage]:
    return list(RecentMessage.objects.filter(character_id=character_id).order_by("position"))


def recent_window_with_last_time(*, character_id: int) -> tuple[list[tuple[str, dict]], datetime | None]:
    """(type, data) of the window's messages in order, without building model instances, and the
    newest raw row's time: what every ``/new_dialog`` renders (the window, then the gap hint), read
    in one statement built once (``_window_read``). ``/new_dialog`` pays every round trip."""
    sql, columns = _window_read(database().vendor)
    rows = select_rows(sql, [character_id, character_id], columns)
    last = rows[0][0] if rows else None
    return [(kind, data) for _, kind, data in rows if kind is not None], last


@functools.cache
def _window_read(vendor: str) -> tuple[str, SelectColumns]:
    """``RecentMessage.objects.filter(character_id=…).order_by("position").values_list("type", "data")``,
    each row beside the last entry of the raw log's (character, timestamp, id) index; one row with no
    message when the window is empty."""
    quote = database().ops.quote_name
    latest, message = quote("latest"), quote("m")
    last, _ = _last_timestamp_read(vendor)
    columns = select_columns(
        [("latest", RawMessage, "timestamp"), ("m", RecentMessage, "type"), ("m", RecentMessage, "data")]
    )
    sql = (
        f"SELECT {columns.sql} FROM (SELECT ({last}) AS {quote(column(RawMessage, 'timestamp'))}) {latest}"
        f" LEFT JOIN {table(RecentMessage)} {message}"
        f" ON {message}.{quote(column(RecentMessage, 'character'))} = %s"
        f" ORDER BY {message}.{quote(column(RecentMessage, 'position'))}"
    )
    return sql, columns


def recent_window_count(*, character_id: int) -> int:
    return RecentMessage.objects.filter(character_id=character_id).count()


def recent_window_dicts(*, character_id: int) -> list[dict]:
    return [m.as_langchain() for m in recent_window(character_id=character_id)]


def window_fingerprint(messages: list[dict]) -> str:
    """An opaque token for one state of the window (optimistic concurrency for manual edits)."""
    canonical = json.dumps([(m["type"], m["data"].get("content")) for m in messages], ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def raw_log_last_timestamp(*, character_id: int) -> datetime | None:
    """The newest raw row's time (the gap hint of every ``/new_dialog``): the last entry of the
    (character, timestamp, id) index, by SQL built once."""
    sql, columns = _last_timestamp_read(database().vendor)
    rows = select_rows(sql, [character_id], columns)
    return rows[0][0] if rows else None


@functools.cache
def _last_timestamp_read(vendor: str) -> tuple[str, SelectColumns]:
    """``RawMessage.objects.filter(character_id=…).aggregate(Max("timestamp"))``, as an index's last entry."""
    columns = select_columns([("r", RawMessage, "timestamp")])
    quote = database().ops.quote_name
    raw = quote("r")
    key = f"{raw}.{quote(column(RawMessage, 'character'))}"
    stamp = f"{raw}.{quote(column(RawMessage, 'timestamp'))}"
    sql = (
        f"SELECT {columns.sql} FROM {table(RawMessage)} {raw} WHERE {key} = %s ORDER BY {stamp} DESC LIMIT 1"
    )
    return sql, columns


def raw_log_between(
    *, character_id: int, start: datetime | None = None, end: datetime | None = None, limit: int | None = None
) -> list[RawMessage]:
    """Rows ordered by (timestamp, id), the original's ``BETWEEN … ORDER BY timestamp, rowid``."""
    rows = RawMessage.objects.filter(character_id=character_id)
    if start is not None:
        rows = rows.filter(timestamp__gte=start)
    if end is not None:
        rows = rows.filter(timestamp__lte=end)
    rows = rows.order_by("timestamp", "id")
    return list(rows[:limit] if limit else rows)


def raw_log_rows(
    *, character_id: int, start: datetime | None = None, end: datetime | None = None, text: str = ""
) -> QuerySet[RawMessage]:
    """Rows in [start, end) whose stored message contains ``text``, ordered by (timestamp, id).

    The text is also looked for in its ``\\uXXXX`` form: a raw log imported from the original may hold
    its messages ASCII-escaped.
    """
    rows = RawMessage.objects.filter(character_id=character_id)
    if start is not None:
        rows = rows.filter(timestamp__gte=start)
    if end is not None:
        rows = rows.filter(timestamp__lt=end)
    if text:
        # Looked for as it sits inside the JSON string (quotes and backslashes escaped), in both forms.
        forms = {json.dumps(text, ensure_ascii=False)[1:-1], json.dumps(text)[1:-1]}
        matches = Q()
        for form in forms:
            matches |= Q(message__icontains=form)
        rows = rows.filter(matches)
    return rows.order_by("timestamp", "id")


def raw_log_last_before(*, character_id: int, before: datetime) -> datetime | None:
    """Timestamp of the latest row before ``before`` (the previous day with a log)."""
    rows = RawMessage.objects.filter(character_id=character_id, timestamp__lt=before)
    return rows.aggregate(last=Max("timestamp"))["last"]


def raw_log_first_from(*, character_id: int, start: datetime) -> datetime | None:
    """Timestamp of the earliest row at or after ``start`` (the next day with a log)."""
    rows = RawMessage.objects.filter(character_id=character_id, timestamp__gte=start)
    return rows.aggregate(first=Min("timestamp"))["first"]


def turn_store_problems() -> list[str]:
    """What a crash or a bad request could have left half-done in the turn store; empty when sound.

    A turn is one transaction: window rows, raw-log rows under one session id, and the post-turn
    outbox op that names that session and carries the same messages. So every post-turn op must find
    exactly its messages in the raw log, every raw session written by a turn must have its op, no
    op may be of a type nothing handles, and the window must sit below the character's position
    counter (the next turn's rows would collide otherwise). An imported raw log has no ops: check a
    store that was written by the routes only.
    """
    from nekomem.journal.models import OutboxOp
    from nekomem.journal.registry import POST_TURN_OP, outbox_steps_for

    problems: list[str] = []
    sessions = {
        (row["character_id"], row["session_id"]): row["rows"]
        for row in RawMessage.objects.values("character_id", "session_id").annotate(rows=Count("id"))
    }
    with_op: set[tuple[int, str]] = set()
    for op in OutboxOp.objects.only("op_id", "character_id", "type", "payload").iterator():
        if not outbox_steps_for(op.type):
            problems.append(f"outbox op {op.op_id}: type {op.type!r} has no registered step")
        if op.type != POST_TURN_OP:
            continue
        key = (op.character_id, str(op.payload.get("session_id", "")))
        with_op.add(key)
        expected = len(op.payload.get("messages") or [])
        if sessions.get(key, 0) != expected:
            problems.append(
                f"outbox op {op.op_id}: {expected} messages, {sessions.get(key, 0)} raw rows in its session"
            )
    problems.extend(
        f"raw session {session_id} of character {character_id} has no post-turn op"
        for character_id, session_id in sessions.keys() - with_op
    )
    overflowing = RecentMessage.objects.filter(
        position__gte=F("character__recent_window_state__next_position")
    )
    problems.extend(
        f"window row {row.pk} of character {row.character_id} at or past the position counter"
        for row in overflowing.only("pk", "character_id")
    )
    return problems


# Theater capsules (reference §1.7), rendered for /new_dialog (recall) and /get_recent_history: one
# line each, newest kept first within the budget, shown oldest first.
_LOCALE_TEXT: dict[str, dict[str, str]] = load_locale_tables("recent.locales")
CAPSULE_MAX_LINES = 5
CAPSULE_MAX_CHARS = 400  # of one summary
CAPSULE_BUDGET_CHARS = 1500  # of all the lines together


def _theater_line(language: str, key: str) -> str:
    return _LOCALE_TEXT.get(language, _LOCALE_TEXT["en"])[f"theater_{key}"]


def theater_capsule_lines(*, character_id: int, language: str) -> list[str]:
    """The character's story capsules as budgeted lines for ``/new_dialog`` and
    ``/get_recent_history``."""
    lines: list[str] = []
    used = 0
    for title, summary in theater_capsules_newest(character_id=character_id, limit=CAPSULE_MAX_LINES):
        text = " ".join(summary.split())
        if len(text) > CAPSULE_MAX_CHARS:
            text = text[: CAPSULE_MAX_CHARS - 1] + "…"
        key = "titled" if title else "untitled"
        line = _theater_line(language, key).format(title=title, summary=text)
        if used + len(line) > CAPSULE_BUDGET_CHARS:
            break
        lines.append(line)
        used += len(line)
    return lines[::-1]


def theater_capsules_newest(*, character_id: int, limit: int) -> list[tuple[str, str]]:
    """(title, summary) of the character's newest story capsules, newest first."""
    rows = TheaterCapsule.objects.filter(character_id=character_id).order_by("-updated_at", "-id")
    return list(rows.values_list("title", "summary")[:limit])


def theater_stories(*, character_id: int) -> list[dict[str, Any]]:
    """``theater/stories`` as the original answers it (reference §1.8, corrections): each story
    exactly ``{story_id, title, memory_summaries}``, the summaries plain strings, one per session
    (oldest first, empty ones skipped), the title the newest ``story_title`` else the id."""
    stories: dict[str, dict[str, Any]] = {}
    for capsule in TheaterCapsule.objects.filter(character_id=character_id).order_by("created_at", "id"):
        story = stories.setdefault(
            capsule.story_id, {"story_id": capsule.story_id, "title": "", "memory_summaries": []}
        )
        story["title"] = capsule.title or story["title"]
        summary = capsule.summary.strip()
        if summary:
            story["memory_summaries"].append(summary)
    for story in stories.values():
        story["title"] = story["title"] or story["story_id"]
    return list(stories.values())


def theater_capsule_list(*, character_id: int) -> list[TheaterCapsule]:
    return list(TheaterCapsule.objects.filter(character_id=character_id).order_by("updated_at", "id"))


_REPLY_SCAN_PAGE = 200
_REPLY_SCAN_MAX_ROWS = 5000


def assistant_replies_newest(*, character_id: int, limit: int) -> list[str]:
    """The text of the character's last ``limit`` replies (``ai`` messages of the raw log), newest
    first; reads at most a few thousand raw rows back."""
    replies: list[str] = []
    rows = RawMessage.objects.filter(character_id=character_id).order_by("-timestamp", "-id")
    for offset in range(0, _REPLY_SCAN_MAX_ROWS, _REPLY_SCAN_PAGE):
        page = list(rows.values_list("message", flat=True)[offset : offset + _REPLY_SCAN_PAGE])
        for raw in page:
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(message, dict) or message.get("type") != "ai":
                continue
            data = message.get("data")
            text = message_text(data.get("content")) if isinstance(data, dict) else ""
            if text.strip():
                replies.append(text)
                if len(replies) >= limit:
                    return replies
        if len(page) < _REPLY_SCAN_PAGE:
            break
    return replies


@dataclass(frozen=True)
class RawTurnShown:
    id: int
    timestamp: datetime
    type: str
    text: str


def raw_turn_shown(row: RawMessage) -> RawTurnShown:
    """A raw row as a person reads it: its type and the text of its content (as stored if unreadable)."""
    try:
        message = json.loads(row.message)
    except ValueError:
        message = None
    if not isinstance(message, dict):
        return RawTurnShown(row.pk, row.timestamp, "?", row.message)
    data = message.get("data")
    content = data.get("content") if isinstance(data, dict) else None
    return RawTurnShown(row.pk, row.timestamp, str(message.get("type", "?")), message_text(content))


def raw_log_forget_preview(
    *, character_id: int, start: datetime, end: datetime, limit: int = 50
) -> tuple[int, list[RawTurnShown]]:
    """What forgetting [start, end) would remove: how many raw turns, and the first ``limit`` of them."""
    rows = raw_log_rows(character_id=character_id, start=start, end=end)
    return rows.count(), [raw_turn_shown(row) for row in rows[:limit]]


def recent_history_text(*, character: Character, language: str | None = None) -> str:
    """Plain transcript for game flows (``/get_history``, the MCP tool): an intro line, then
    ``speaker | content``; memos bare. The intro is the second half of ``/new_dialog``'s
    inner-thoughts sentence (reference §5.1): game flows read it, so it follows the locale too."""
    lang = character_language(character, request_language=language)
    master = master_display_name(character.master_name, lang)
    lines = theater_capsule_lines(character_id=character.pk, language=lang)
    for message in recent_window(character_id=character.pk):
        text = message_text(message.data.get("content"))
        if message.type == "system":
            lines.append(text)
        else:
            speaker = master if message.type == "human" else character.name
            lines.append(f"{speaker} | {text}")
    intro = _LOCALE_TEXT[lang]["history_intro" if lines else "history_empty"].format(name=character.name)
    return "\n".join([intro, *lines]) + "\n"
