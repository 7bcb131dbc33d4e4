"""``history.ndjson`` for import and export (issue 49): ours alone, the original reads no such file.

What the history knows of each event of ``events.ndjson`` beyond the original's line (whether compaction
wrote it as a seed, a version's cause and source), and every version (``memory.version``), which
``events.ndjson`` does not carry, whole. Imported after ``events.ndjson``, whose stamp it shares.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Field, Model

from nekomem.characters.models import Character
from nekomem.journal.causes import current_cause
from nekomem.journal.events import VERSION_EVENT
from nekomem.journal.file_ids import copy_id, parse_timestamp, parse_uuid
from nekomem.journal.models import Event
from nekomem.journal.portability import EventLine, events_owned, events_stamp
from nekomem.journal.registry import history_layer
from nekomem.journal.versions import version_events
from nekomem.portability import (
    FileHandler,
    ImportResult,
    MalformedFile,
    chunked,
    read_ndjson,
    register_file_handler,
    write_ndjson,
)
from nekomem.statements import database
from nekomem.timestamps import iso_local

# An event's fields that the original's ``events.ndjson`` line carries (or that are the row's own).
_ORIGINAL_EVENT_FIELDS = frozenset({"seq", "event_id", "character", "type", "ts", "payload"})


def _history_fields() -> list[Field[Any, Any]]:
    """What the history knows of an event beyond the original's line: whether compaction wrote it as a
    seed, and every field the history adds (a version's cause and source), whatever they are."""
    return [
        field
        for field in Event._meta.concrete_fields
        if field.name not in _ORIGINAL_EVENT_FIELDS and not field.is_relation
    ]


def _history_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso_local(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


@dataclass(frozen=True)
class HistoryLine:
    event_id: uuid.UUID
    fields: dict[str, Any]
    # A version (``memory.version``), which ``events.ndjson`` does not carry: the whole event is here.
    version: EventLine | None = None


def _version_line(record: dict[str, Any], event_id: uuid.UUID) -> EventLine | None:
    if record.get("type") != VERSION_EVENT:
        return None
    payload = record.get("payload")
    if not isinstance(payload, dict):
        raise ValueError("a version's 'payload' must be an object")
    return EventLine(event_id, VERSION_EVENT, parse_timestamp(record.get("ts"), "ts"), payload)


def read_history(path: Path) -> list[HistoryLine]:
    """Lines of ``{"event_id", <field>: value…}``, and a version's whole event (``type``, ``ts``,
    ``payload``); a field this server does not know is ignored (a newer server's history read by an
    older one), a known one must be valid."""
    known = {field.name: field for field in _history_fields()}
    lines: list[HistoryLine] = []
    for number, record in read_ndjson(path):
        try:
            if not isinstance(record, dict):
                raise ValueError(f"expected an object, got {type(record).__name__}")
            event_id = parse_uuid(record.get("event_id"), "event_id")
            version = _version_line(record, event_id)
            fields = {}
            for name, value in record.items():
                field = known.get(name)
                if field is None:
                    continue
                try:
                    fields[name] = field.to_python(value)
                except ValidationError as exc:
                    raise ValueError(f"{name!r}: {'; '.join(exc.messages)}") from exc
            lines.append(HistoryLine(event_id, fields, version))
        except ValueError as exc:
            raise MalformedFile(path, str(exc), entry=f"line {number}") from exc
    return lines


def write_history(character: Character, lines: list[HistoryLine]) -> ImportResult:
    """Give the character's events (imported from ``events.ndjson`` just before) what the history knew of
    them; a line whose event is not in the log (compacted away since) is left out. Versions the
    character does not hold yet are added, in the file's order."""
    created = _versions_add(character, [line for line in lines if line.version is not None])
    by_id = {line.event_id: line for line in lines}
    candidates = {
        candidate: line.event_id
        for line in lines
        for candidate in (line.event_id, copy_id(line.event_id, character_id=character.pk))
    }
    changed: list[Event] = []
    unchanged = 0
    names = sorted({name for line in lines for name in line.fields})
    for chunk in chunked(list(candidates)):
        for event in Event.objects.filter(character=character, event_id__in=chunk):
            fields = by_id[candidates[event.event_id]].fields
            if all(getattr(event, name) == value for name, value in fields.items()):
                unchanged += 1
                continue
            for name, value in fields.items():
                setattr(event, name, value)
            changed.append(event)
    if changed and names:
        Event.objects.bulk_update(changed, names, batch_size=1000)
    return ImportResult(created=created, updated=len(changed), unchanged=unchanged - created)


def _versions_add(character: Character, lines: list[HistoryLine]) -> int:
    """Add the versions of ``lines`` the character lacks; returns how many.

    The import has just versioned every row it wrote (cause ``import``); those versions are moved after
    the ones added here, so a row's versions stay in time order and its newest is still the state the
    import left (what an undo of the import goes back from)."""
    ids, mine = events_owned(character, [line.event_id for line in lines])
    adding = [
        (event_id, line)
        for event_id, line in zip(ids, lines, strict=True)
        if line.version is not None and event_id not in mine
    ]
    if not adding:
        return 0
    keys = _row_keys(character, [line for _, line in adding])
    new = [
        Event(
            character=character,
            event_id=event_id,
            type=VERSION_EVENT,
            ts=line.version.ts,
            payload={**line.version.payload, "pk": keys.get(_row_of(line))},
            **line.fields,
        )
        for event_id, line in adding
        if line.version is not None
    ]
    _, source = current_cause()
    ours = list(
        Event.objects.filter(character=character, type=VERSION_EVENT, source=source).order_by("seq")
        if source
        else []
    )
    if ours:
        Event.objects.filter(seq__in=[event.seq for event in ours]).delete()
    Event.objects.bulk_create(new, batch_size=1000)
    for event in ours:
        event.seq = None  # type: ignore[assignment]  # a new sequence number, after the added versions
    Event.objects.bulk_create(ours, batch_size=1000)
    return len(new)


def _row_of(line: HistoryLine) -> tuple[str, str]:
    return str(line.fields.get("layer") or ""), str(line.fields.get("row") or "")


def _row_keys(character: Character, lines: list[HistoryLine]) -> dict[tuple[str, str], int]:
    """The primary key each row the versions of ``lines`` belong to has here, by (layer, row id).

    A version names its row's key in the database it came from. A row the import wrote has the key it
    was imported under; a row deleted before the export has no row here, so all its versions share one
    key no other row holds or will be given: the one versions added by an earlier import named, else one
    reserved from the table's sequence. A restore of such a version re-creates the row under that key,
    and the row's later versions name it too. A layer whose keys are not a table's (the memo's is its
    character's) names the key it gives (``HistoryLayer.row_key``); any other layer with no row model
    keeps such versions keyless (a restore of them is refused)."""
    wanted: dict[str, set[str]] = {}
    for line in lines:
        layer_name, row = _row_of(line)
        wanted.setdefault(layer_name, set()).add(row)
    keys: dict[tuple[str, str], int] = {}
    for name, rows in sorted(wanted.items()):
        layer = history_layer(name)
        if layer is None:
            continue
        if layer.row_key is not None:  # the key is the character's, not the table's: no row to look up
            keys.update({(name, row): layer.row_key(character.pk, row) for row in rows})
            continue
        current = layer.current(character.pk)
        keys.update({(name, row): current[row][0] for row in rows if row in current})
        gone = sorted(row for row in rows if row not in current)
        if not gone or layer.row_type is None or not issubclass(layer.row_type, Model):
            continue
        known: dict[str, int] = {}
        for chunk in chunked(gone):
            for row, payload in (
                version_events(character_id=character.pk)
                .filter(layer=name, row__in=chunk)
                .values_list("row", "payload")
            ):
                if isinstance(pk := payload.get("pk"), int):
                    known[row] = pk
        unknown = [row for row in gone if row not in known]
        known.update(zip(unknown, _pks_reserve(layer.row_type, len(unknown)), strict=False))
        keys.update({(name, row): pk for row, pk in known.items()})
    return keys


def _pks_reserve(model: type[Model], count: int) -> list[int]:
    """``count`` primary keys of ``model``'s table that no row holds and that its sequence will never hand
    out (taken from it), for rows to be created later under them; none on a backend not known here."""
    if count <= 0:
        return []
    connection = database()
    quote = connection.ops.quote_name
    table, column = model._meta.db_table, str(model._meta.pk.column)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                [quote(table), column, count],
            )
            return [int(pk) for (pk,) in cursor.fetchall()]
        if connection.vendor == "sqlite":
            # Django's auto ids are AUTOINCREMENT: a new id is above sqlite_sequence's and every row's.
            cursor.execute(f"SELECT MAX({quote(column)}) FROM {quote(table)}")
            highest = cursor.fetchone()[0] or 0
            cursor.execute("SELECT seq FROM sqlite_sequence WHERE name = %s", [table])
            counted = cursor.fetchone()
            start = max(highest, counted[0] if counted else 0)
            statement = (
                "UPDATE sqlite_sequence SET seq = %s WHERE name = %s"
                if counted
                else "INSERT INTO sqlite_sequence (seq, name) VALUES (%s, %s)"
            )
            cursor.execute(statement, [start + count, table])
            return list(range(start + 1, start + count + 1))
    return []


def export_history(character: Character, path: Path) -> int | None:
    events = Event.objects.filter(character=character).order_by("seq")
    if not events.exists() and not path.exists():
        return None
    fields = _history_fields()
    count = 0

    def lines() -> Iterator[dict[str, Any]]:
        nonlocal count
        for event in events.iterator(chunk_size=2000):
            count += 1
            line = {
                "event_id": str(event.event_id),
                **{field.name: _history_value(field.value_from_object(event)) for field in fields},
            }
            if event.type == VERSION_EVENT:  # not in events.ndjson: the whole version is here
                # With its offset and microseconds: an as-of read compares these times exactly.
                line.update(type=VERSION_EVENT, ts=event.ts.isoformat(), payload=event.payload)
            yield line

    write_ndjson(path, lines())
    return count


def register() -> None:
    # Imported after ``events.ndjson`` (60), whose events it completes.
    register_file_handler(
        FileHandler("history.ndjson", 63, read_history, write_history, export_history, stamp=events_stamp)
    )
