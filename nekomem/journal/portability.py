"""``events.ndjson``, ``events_applied.json`` and ``outbox.ndjson`` for import and export (reference
§2.13–2.14). ``history.ndjson``, ours alone, is the history app's (``history.portability``).

Events and ops keep their ids, so a re-import recognises them and changes nothing. Both ids are unique
across characters here (one table each), so a directory imported a second time under another name
(``import_memory --as``) gets ids derived from the original id and the new character: stable, so
that copy's re-import is recognised too (``file_ids``). The outbox's file: ``outbox_file``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db.models import Count, Max

from nekomem.characters.models import Character
from nekomem.journal.events import EVENT_TYPES, VERSION_EVENT
from nekomem.journal.file_ids import copy_id, own_id, owned_ids, parse_timestamp, parse_uuid
from nekomem.journal.models import AppliedSentinel, Event
from nekomem.journal.outbox_file import export_outbox, read_outbox, write_outbox
from nekomem.portability import (
    FileHandler,
    ImportResult,
    MalformedFile,
    chunked,
    read_json,
    read_ndjson,
    register_file_handler,
    write_json,
    write_ndjson,
)
from nekomem.timestamps import iso_local, parse_iso

# --- events.ndjson -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EventLine:
    event_id: uuid.UUID
    type: str
    ts: datetime
    payload: dict[str, Any]


def read_events(path: Path) -> list[EventLine]:
    events: list[EventLine] = []
    seen: set[uuid.UUID] = set()
    for number, record in read_ndjson(path):
        try:
            if not isinstance(record, dict):
                raise ValueError(f"expected an object, got {type(record).__name__}")
            event_id = parse_uuid(record.get("event_id"), "event_id")
            if event_id in seen:
                raise ValueError(f"event {event_id} appears twice")
            event_type = record.get("type")
            if event_type not in EVENT_TYPES:
                raise ValueError(f"unknown event type {event_type!r}")
            payload = record.get("payload", {})
            if not isinstance(payload, dict):
                raise ValueError("'payload' must be an object")
            events.append(EventLine(event_id, event_type, parse_timestamp(record.get("ts"), "ts"), payload))
            seen.add(event_id)
        except ValueError as exc:
            raise MalformedFile(path, str(exc), entry=f"line {number}") from exc
    return events


def events_owned(character: Character, event_ids: list[uuid.UUID]) -> tuple[list[uuid.UUID], set[uuid.UUID]]:
    """The ids a file's events get under this character (``file_ids``), in order, and those of them the
    character's log already holds (a re-import)."""
    owners = owned_ids(Event, "event_id", event_ids)
    ids = [own_id(event_id, owners, character_id=character.pk) for event_id in event_ids]
    held: set[uuid.UUID] = set()
    for chunk in chunked(ids):
        held.update(
            Event.objects.filter(character=character, event_id__in=chunk).values_list("event_id", flat=True)
        )
    return ids, held


def write_events(character: Character, events: list[EventLine]) -> ImportResult:
    ids, mine = events_owned(character, [e.event_id for e in events])
    # File order is log order: new events get increasing sequence numbers in it.
    new = [
        Event(character=character, event_id=event_id, type=e.type, ts=e.ts, payload=e.payload)
        for event_id, e in zip(ids, events, strict=True)
        if event_id not in mine
    ]
    Event.objects.bulk_create(new, batch_size=1000)
    return ImportResult(created=len(new), unchanged=len(events) - len(new))


def export_events(character: Character, path: Path) -> int | None:
    # Versions are nekomem's history, which the original does not know: they are not its events.
    events = Event.objects.filter(character=character).exclude(type=VERSION_EVENT).order_by("seq")
    if not events.exists() and not path.exists():
        return None
    count = 0

    def lines() -> Iterator[dict[str, Any]]:
        nonlocal count
        for event in events.iterator(chunk_size=2000):
            count += 1
            yield {
                "event_id": str(event.event_id),
                "type": event.type,
                "ts": iso_local(event.ts),
                "payload": event.payload,
            }

    write_ndjson(path, lines())
    return count


# --- events_applied.json -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SentinelFile:
    last_applied_event_id: uuid.UUID | None
    ts: datetime | None


def read_sentinel(path: Path) -> SentinelFile:
    data = read_json(path)
    if not isinstance(data, dict):
        raise MalformedFile(path, f"expected a JSON object, got {type(data).__name__}")
    raw = data.get("last_applied_event_id")
    try:
        event_id = None if raw is None else parse_uuid(raw, "last_applied_event_id")
    except ValueError as exc:
        raise MalformedFile(path, str(exc), entry="last_applied_event_id") from exc
    try:
        ts = parse_iso(data.get("ts"))
    except ValueError as exc:
        raise MalformedFile(path, str(exc), entry="ts") from exc
    return SentinelFile(event_id, ts)


def write_sentinel(character: Character, sentinel: SentinelFile) -> ImportResult:
    """Place the sentinel on the imported log; never move an existing one backwards.

    A sentinel naming an event not in the log (compacted away) makes the reconciler replay the whole
    log, as the original does: it is kept with no position.
    """
    seq: int | None = None
    event_id = sentinel.last_applied_event_id
    if event_id is not None:
        for candidate in (event_id, copy_id(event_id, character_id=character.pk)):
            found = (
                Event.objects.filter(character=character, event_id=candidate)
                .values_list("seq", flat=True)
                .first()
            )
            if found is not None:
                seq, event_id = found, candidate
                break
    current = AppliedSentinel.objects.filter(character=character).first()
    if current is None:
        AppliedSentinel.objects.create(
            character=character, last_applied_seq=seq, last_applied_event_id=event_id, ts=sentinel.ts
        )
        return ImportResult(created=1)
    same = (current.last_applied_seq, current.last_applied_event_id, current.ts) == (
        seq,
        event_id,
        sentinel.ts,
    )
    ahead = seq is not None and (current.last_applied_seq is None or current.last_applied_seq < seq)
    if same or not ahead:
        return ImportResult(unchanged=1)
    AppliedSentinel.objects.filter(pk=current.pk).update(
        last_applied_seq=seq, last_applied_event_id=event_id, ts=sentinel.ts
    )
    return ImportResult(updated=1)


def export_sentinel(character: Character, path: Path) -> int | None:
    sentinel = AppliedSentinel.objects.filter(character=character).first()
    if sentinel is None:
        return None
    event_id = sentinel.last_applied_event_id
    write_json(
        path,
        {"last_applied_event_id": None if event_id is None else str(event_id), "ts": iso_local(sentinel.ts)},
    )
    return 1


def events_stamp(character: Character) -> tuple[object, ...]:
    """The log only grows, or is compacted (fewer rows): either moves the count or the last seq. A
    forgetting blanks texts in place, and moves the character's ``forgotten_version``."""
    found = Event.objects.filter(character=character).aggregate(count=Count("seq"), last=Max("seq"))
    forgotten = Character.objects.filter(pk=character.pk).values_list("forgotten_version", flat=True).first()
    return (found["count"], found["last"], forgotten)


def register() -> None:
    register_file_handler(
        FileHandler("events.ndjson", 60, read_events, write_events, export_events, stamp=events_stamp)
    )
    register_file_handler(
        FileHandler("events_applied.json", 61, read_sentinel, write_sentinel, export_sentinel)
    )
    register_file_handler(FileHandler("outbox.ndjson", 62, read_outbox, write_outbox, export_outbox))
