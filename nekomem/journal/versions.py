"""The journal's recording of versions (issue 49): one ``memory.version`` event per row a change reports.

Every layer reports each row it writes or deletes through ``character_memory_changed``; the journal
observes those reports and appends, in the same transaction, one version event per row with the row's
whole state (``HistoryLayer.snapshots``) and the change's cause and source (``nekomem.journal.causes``).
This is the write path every layer rides on, so it stays in the kernel; reading the versions back (a
row's history, the timeline, undo, restore, rollback) is the ``history`` app's.
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Field, Model, Q, QuerySet
from django.utils import timezone

from nekomem.journal.causes import current_cause, current_detail
from nekomem.journal.events import VERSION_EVENT
from nekomem.journal.models import Event
from nekomem.journal.redaction import events_redact
from nekomem.journal.registry import HistoryLayer, history_layer, history_layer_for_pool
from nekomem.statements import database, insert_preparers, prepared_rows_insert


def version_events(*, character_id: int) -> QuerySet[Event]:
    return Event.objects.filter(character_id=character_id, type=VERSION_EVENT)


def versions_record(character_id: int, pool: str, pks: list[int], held: Sequence[object] = ()) -> None:
    """Append one version per reported row (the journal's memory-change observer): one insert, after
    one read of the rows the writer did not hand over as it saved them (``held``)."""
    layer = history_layer_for_pool(pool)
    if layer is None or not pks:
        return
    found = _held_snapshots(layer, character_id, pks, held)
    if missing := [pk for pk in pks if pk not in found]:
        found.update(layer.snapshots(character_id, missing))
    gone = [pk for pk in pks if pk not in found]
    # A deleted row is named by its last version; one read, and only when rows were deleted.
    last_ids: dict[int, str] = {}
    if gone:
        for row, payload in (
            version_events(character_id=character_id)
            .filter(layer=layer.name, payload__pk__in=gone)
            .order_by("seq")
            .values_list("row", "payload")
        ):
            last_ids[payload["pk"]] = row
    cause, source = current_cause()
    versions = [
        (pk, *found[pk]) if pk in found else (pk, last_ids[pk], None)
        for pk in pks
        if pk in found or pk in last_ids
    ]
    _versions_insert(character_id, layer.name, versions, cause=cause, source=source)
    if gone and cause == "forget":
        for pk in gone:
            if pk in last_ids:
                versions_forget(character_id=character_id, layer=layer.name, row_id=last_ids[pk])


# A version's own values; every other column is the same for all the versions of one change, and
# every column but these and the change's own (``_versions_insert``'s ``shared``) the same for all.
_PER_VERSION = ("event_id", "payload", "row")
_PER_CHANGE = ("character_id", "type", "ts", "cause", "source", "layer")


@dataclass(frozen=True)
class _VersionColumns:
    """The insert's values laid out once per backend: the constant ones prepared, the others' places."""

    constant: tuple[Any, ...]  # None where a change or a version fills it in
    per_change: tuple[tuple[int, Field, bool], ...]  # (position, field, needs preparing)
    event_id: tuple[int, Field]
    payload: tuple[int, Field]
    row: int
    native_uuid: bool  # the driver takes a UUID as it is (else its hex, as UUIDField prepares it)


@functools.cache
def _version_columns(vendor: str) -> _VersionColumns:
    connection = database()
    constant: list[Any] = []
    per_change: list[tuple[int, Field, bool]] = []
    at: dict[str, tuple[int, Field]] = {}
    for position, (field, prepare) in enumerate(insert_preparers(Event)):
        at[field.attname] = (position, field)
        if field.attname in _PER_VERSION or field.attname in _PER_CHANGE or callable(field.default):
            constant.append(None)
            if field.attname not in _PER_VERSION:
                per_change.append((position, field, prepare))
            continue
        value = field.get_default()
        constant.append(field.get_db_prep_save(value, connection) if prepare else value)
    return _VersionColumns(
        constant=tuple(constant),
        per_change=tuple(per_change),
        event_id=at["event_id"],
        payload=at["payload"],
        row=at["row"][0],
        native_uuid=bool(connection.features.has_native_uuid_field),
    )


def _versions_insert(
    character_id: int,
    layer: str,
    versions: Sequence[tuple[int, str, dict[str, Any] | None]],
    *,
    cause: str,
    source: str,
) -> None:
    """One ``executemany`` of ``(pk, row id, fields)`` versions, without model instances: the values they
    all share are prepared once per change (most once per process), a version's own (a fresh event id,
    its payload) as it is built. This is on the path of every memory write; the payload is the JSON it
    always was."""
    if not versions:
        return
    connection = database()
    columns = _version_columns(connection.vendor)
    shared = {
        "character_id": character_id,
        "type": VERSION_EVENT,
        "ts": timezone.now(),
        "cause": cause,
        "source": source,
        "layer": layer,
    }
    template = list(columns.constant)
    for position, field, prepare in columns.per_change:
        value = shared[field.attname] if field.attname in shared else field.get_default()
        # ``prepared``: the values here are what ``get_prep_value`` would return (an aware datetime,
        # strings), so only the backend's adaptation is left of ``get_db_prep_save``.
        template[position] = field.get_db_prep_value(value, connection, prepared=True) if prepare else value
    at_id, (at_payload, payload_field), at_row = columns.event_id[0], columns.payload, columns.row
    detail = current_detail()
    native_uuid = columns.native_uuid
    rows = []
    for pk, row_id, fields in versions:
        values = template.copy()
        event_id = _random_event_id()
        values[at_id] = uuid.UUID(int=event_id) if native_uuid else f"{event_id:032x}"
        payload = {"pk": pk, "fields": fields, "detail": detail} if detail else {"pk": pk, "fields": fields}
        values[at_payload] = payload_field.get_db_prep_value(payload, connection, prepared=True)
        values[at_row] = row_id
        rows.append(values)
    prepared_rows_insert(Event, rows, connection=connection)


def _random_event_id() -> int:
    """A version's event id: what ``uuid.uuid4()`` makes (16 bytes of ``os.urandom``, the version and
    variant bits set), as an integer, without a ``UUID`` object built and read back on every memory write
    (issue 49). Not ``random``: a seeded generator (a test framework seeds it per example) repeats ids."""
    return int.from_bytes(os.urandom(16)) & ~(0xF000 << 64 | 0xC000 << 48) | 0x4000 << 64 | 0x8000 << 48


@functools.cache
def _loaded_fields(row_type: type[Model]) -> frozenset[str]:
    return frozenset(field.attname for field in row_type._meta.concrete_fields)


def _held_snapshots(
    layer: HistoryLayer, character_id: int, pks: list[int], held: Sequence[object]
) -> dict[int, tuple[str, dict[str, Any]]]:
    """The versions of the rows the writer holds, as saved: no read. A row with deferred fields (a
    partial load) is read back instead, so a version is always the whole row."""
    if not held or layer.held_snapshot is None or layer.row_type is None:
        return {}
    wanted = set(pks)
    found: dict[int, tuple[str, dict[str, Any]]] = {}
    for row in held:
        if not (isinstance(row, layer.row_type) and isinstance(row, Model)):
            continue
        pk = row.pk
        if (
            pk in wanted
            and getattr(row, "character_id", None) == character_id
            and _loaded_fields(type(row)) <= row.__dict__.keys()  # no deferred field
        ):
            found[pk] = layer.held_snapshot(row)
    return found


def versions_forget(*, character_id: int, layer: str, row_id: str) -> int:
    """Blank, in every version of a forgotten row, each string that holds one of its texts: its history
    keeps when and why it changed, never what it said. Returns how many versions were rewritten."""
    rows = version_events(character_id=character_id).filter(layer=layer, row=row_id)
    history = history_layer(layer)
    keys = history.forget_keys if history is not None else ("text",)
    texts = {
        str(fields.get(key))
        for payload in rows.values_list("payload", flat=True)
        if isinstance(fields := payload.get("fields"), dict)
        for key in keys
        if fields.get(key)
    }
    return events_redact(
        character_id=character_id, texts=texts, match=Q(type=VERSION_EVENT, layer=layer, row=row_id)
    )
