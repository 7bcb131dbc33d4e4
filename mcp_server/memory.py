"""What each MCP tool does, as plain synchronous calls of the services and selectors the wire routes,
the REST API and the memory browser already use: no second write path.

Every function takes the connection's character name and returns something a model reads well
(plain dicts of short fields, or Markdown text). A request the model got wrong raises ``MemoryToolError``
with a message in the character's language; the transport turns it into a tool error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from facts.models import Fact
from facts.selectors import fact_get, facts_browse
from facts.services import fact_delete, fact_update
from mcp_server import locale
from nekomem.characters.locks import wait_for_settled
from nekomem.characters.models import Character
from nekomem.characters.selectors import character_get
from nekomem.errors import Conflict
from nekomem.http import HistoryParseError
from nekomem.journal.causes import caused_by
from nekomem.language.resolution import resolve_language
from persona.models import PersonaEntry
from persona.selectors import long_term_memory_markdown, persona_entries_browse, persona_entry_get
from persona.services import persona_ensure, persona_entry_delete, persona_entry_edit
from recall.selectors import TimeWindow, parse_time_window, working_context_render
from recall.services import RecallRequest, recall_query
from recent.selectors import parse_history, recent_history_text
from recent.services import turn_record
from reflections.models import Reflection
from reflections.selectors import reflection_browse, reflection_get
from reflections.services import reflection_archive, reflection_edit

MemoryKind = Literal["fact", "reflection", "persona"]
KINDS: tuple[MemoryKind, ...] = ("fact", "reflection", "persona")
# Reflections leave recall and the working context when archived; the browser's "forget" is the same move.
_FORGOTTEN_REFLECTION_STATUSES = (Reflection.Status.ARCHIVED, Reflection.Status.DENIED)
LIST_LIMIT_MAX = 200
# forget_everything_about works in one pass; a subject that matches more than this is refused, so a
# vague word ("the") cannot wipe a memory in one call.
FORGET_LIMIT = 200


class MemoryToolError(Exception):
    """The model's request cannot be done as asked; the message says why, in the character's language."""


@dataclass(frozen=True)
class Connection:
    """The character one MCP connection speaks for."""

    name: str

    def character(self) -> Character | None:
        return character_get(name=self.name)

    def language(self, character: Character | None = None) -> str:
        return resolve_language(character.language if character else None)

    def error(self, key: str, **values: Any) -> MemoryToolError:
        return MemoryToolError(locale.text(self.language(self.character()), key, **values))


def _iso(moment: datetime | None) -> str | None:
    return timezone.localtime(moment).isoformat(timespec="seconds") if moment is not None else None


# --- conversation and recall ------------------------------------------------------------------------


def remember(
    conn: Connection, *, messages: list[dict[str, Any]], language: str | None = None
) -> dict[str, Any]:
    """A finished exchange, stored as ``POST /cache`` stores it (the same parse, the same service)."""
    try:
        parsed = parse_history(json.dumps(messages, ensure_ascii=False))
    except HistoryParseError as exc:
        raise MemoryToolError(str(exc)) from exc
    if not parsed:
        raise conn.error("no_messages")
    turn_record(name=conn.name, messages=parsed, language=language, append_recent=True, compress="never")
    return {"stored": len(parsed), "character": conn.name}


def _why(row: dict[str, Any], window: dict[str, Any] | None) -> str:
    explain = row.get("explain") or {}
    paths = ", ".join(f"{path} #{found['rank']}" for path, found in sorted(explain.get("paths", {}).items()))
    reasons = [f"matched by {paths}"] if paths else []
    if window:
        reasons.append(f"in {window['start']} .. {window['end']}")
    return "; ".join(reasons) or "in the time window"


def recall(conn: Connection, *, query: str = "", time: str | None = None, limit: int = 10) -> dict[str, Any]:
    """``POST /query_memory?explain=1`` trimmed for a model: text, tier, time and why each matched."""
    if not query.strip() and not (time or "").strip():
        raise conn.error("query_or_time")
    body = recall_query(name=conn.name, request=RecallRequest(query=query, time=time or None, explain=True))
    window = body.get("window")
    memories = [
        {
            "id": row["id"],
            "text": row["text"],
            "tier": row["tier"],
            "time": row["event_start_at"] or row["created_at"],
            "why": _why(row, window),
        }
        for row in body["results"][:limit]
    ]
    answer: dict[str, Any] = {"memories": memories}
    if time:
        # An expression recall could not read is ignored there (semantic search only); say so.
        answer["time_window"] = window
    return answer


def working_context(conn: Connection, *, language: str | None = None) -> str:
    """The ``/new_dialog`` text: long-term memory, the recent window, the gap since the last turn."""
    character = wait_for_settled(conn.name)
    if character is None:
        return ""
    return working_context_render(
        character=character, language=resolve_language(language, character.language)
    )


def persona(conn: Connection, *, language: str | None = None) -> str:
    """The persona (and the reflections shown with it) as Markdown, as ``/get_settings`` renders it."""
    character = conn.character()
    if character is None:
        return ""
    persona_ensure(character_id=character.pk)
    language = resolve_language(language, character.language)
    return long_term_memory_markdown(character=character, language=language, now=timezone.now())


def recent_window(conn: Connection) -> str:
    character = conn.character()
    return recent_history_text(character=character) if character is not None else ""


# --- memories by id ---------------------------------------------------------------------------------


def _fact_row(fact: Fact) -> dict[str, Any]:
    return {
        "id": fact.fact_id,
        "kind": "fact",
        "text": fact.text,
        "entity": fact.entity,
        "importance": fact.importance,
        "time": _iso(fact.event_start_at or fact.created_at),
        "state": "archived" if fact.archived else "absorbed" if fact.absorbed else "active",
        "editable": True,
    }


def _reflection_row(reflection: Reflection) -> dict[str, Any]:
    return {
        "id": reflection.reflection_id,
        "kind": "reflection",
        "text": reflection.text,
        "time": _iso(reflection.created_at),
        "state": "archived" if reflection.archive_shard_path else reflection.status,
        "editable": True,
    }


def _persona_row(entry: PersonaEntry) -> dict[str, Any]:
    return {
        "id": entry.entry_id,
        "kind": "persona",
        "text": entry.text,
        "section": entry.section,
        "time": _iso(entry.created_at),
        # Character-card entries change with the card, never by hand.
        "editable": not entry.protected,
    }


def list_memories(
    conn: Connection, *, kind: MemoryKind | None = None, contains: str = "", limit: int = 50
) -> dict[str, Any]:
    """Facts, reflections and persona entries, newest first within each kind (the browser's lists)."""
    character = conn.character()
    if character is None:
        return {"memories": []}
    rows: list[dict[str, Any]] = []
    for each in (kind,) if kind else KINDS:
        if each == "fact":
            facts = facts_browse(character_id=character.pk, text=contains)
            rows += [_fact_row(f) for f in facts.exclude(archived=True)[:limit]]
        elif each == "reflection":
            reflections = reflection_browse(character_id=character.pk, archived=False, query=contains)
            live = reflections.exclude(status__in=_FORGOTTEN_REFLECTION_STATUSES)
            rows += [_reflection_row(r) for r in live[:limit]]
        else:
            rows += [
                _persona_row(e)
                for e in persona_entries_browse(character_id=character.pk, query=contains)[:limit]
            ]
    return {"memories": rows[:limit]}


def _find(conn: Connection, memory_id: str) -> tuple[Character, Fact | Reflection | PersonaEntry]:
    character = conn.character()
    found: Fact | Reflection | PersonaEntry | None = None
    if character is not None:
        found = (
            fact_get(character_id=character.pk, fact_id=memory_id)
            or reflection_get(character_id=character.pk, reflection_id=memory_id)
            or persona_entry_get(character_id=character.pk, entry_id=memory_id)
        )
    if character is None or found is None:
        raise conn.error("not_found", id=memory_id)
    return character, found


def _row(item: Fact | Reflection | PersonaEntry) -> dict[str, Any]:
    if isinstance(item, Fact):
        return _fact_row(item)
    if isinstance(item, Reflection):
        return _reflection_row(item)
    return _persona_row(item)


def get_memory(conn: Connection, *, memory_id: str) -> dict[str, Any]:
    return _row(_find(conn, memory_id)[1])


@caused_by("mcp")  # the stdio transport passes no request middleware: the tool names its cause itself
def update_memory(conn: Connection, *, memory_id: str, text: str) -> dict[str, Any]:
    """New text for a fact, a reflection or a persona entry, through the browser's services."""
    character, item = _find(conn, memory_id)
    try:
        if isinstance(item, Fact):
            updated: Fact | Reflection | PersonaEntry = fact_update(
                character_id=character.pk, fact_id=memory_id, text=text
            )
        elif isinstance(item, Reflection):
            updated = reflection_edit(character_id=character.pk, reflection_id=memory_id, text=text)
        else:
            updated = persona_entry_edit(character_id=character.pk, entry_id=memory_id, text=text)
    except Conflict as exc:
        raise conn.error("read_only", id=memory_id) from exc
    except ValueError as exc:
        raise MemoryToolError(str(exc)) from exc
    return _row(updated)


def _forget(character: Character, item: Fact | Reflection | PersonaEntry) -> None:
    if isinstance(item, Fact):
        fact_delete(character_id=character.pk, fact_id=item.fact_id)
    elif isinstance(item, Reflection):
        if not item.archive_shard_path:
            reflection_archive(character_id=character.pk, reflection_id=item.reflection_id)
    else:
        persona_entry_delete(character_id=character.pk, entry_id=item.entry_id)


def forget_memory(conn: Connection, *, memory_id: str) -> dict[str, Any]:
    """Delete a fact or a persona entry, archive a reflection (the browser's actions)."""
    character, item = _find(conn, memory_id)
    try:
        _forget(character, item)
    except Conflict as exc:
        raise conn.error("read_only", id=memory_id) from exc
    return {"forgotten": memory_id, "kind": _row(item)["kind"]}


def _window(conn: Connection, expression: str) -> TimeWindow:
    window = parse_time_window(expression, now=timezone.now(), tz=settings.TIME_ZONE)
    if window is None:
        raise conn.error("time_unreadable", time=expression)
    return window


def forget_everything_about(
    conn: Connection, *, subject: str = "", time: str | None = None, dry_run: bool = False
) -> dict[str, Any]:
    """Facts and reflections whose text mentions ``subject`` and/or whose time falls in ``time``.

    Until the group/forgetting rules land this is the browser's search and its per-item forget, in one
    call; ``dry_run`` lists what would go.
    """
    subject = subject.strip()
    if not subject and not (time or "").strip():
        raise conn.error("subject_or_time")
    window = _window(conn, time) if time else None
    character = conn.character()
    if character is None:
        return {"forgotten": [], "dry_run": dry_run}
    facts = facts_browse(character_id=character.pk, text=subject).exclude(archived=True)
    reflections = reflection_browse(character_id=character.pk, archived=False, query=subject).exclude(
        status__in=_FORGOTTEN_REFLECTION_STATUSES
    )
    if window is not None:
        start, end = window.start, window.end
        facts = facts.filter(
            Q(event_start_at__gte=start, event_start_at__lt=end)
            | Q(event_start_at__isnull=True, created_at__gte=start, created_at__lt=end)
        )
        reflections = reflections.filter(created_at__gte=start, created_at__lt=end)
    doomed: list[Fact | Reflection] = [*facts[: FORGET_LIMIT + 1], *reflections[: FORGET_LIMIT + 1]]
    if len(doomed) > FORGET_LIMIT:
        raise conn.error("too_many", limit=FORGET_LIMIT)
    if not dry_run:
        for item in doomed:
            _forget(character, item)
    return {"forgotten": [_row(item) for item in doomed], "dry_run": dry_run}
