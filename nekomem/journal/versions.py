"""The journal's recording of versions (issue 49): one ``memory.version`` event per row a change reports.

Every layer reports each row it writes or deletes through ``character_memory_changed``; the journal
observes those reports and appends, in the same transaction, one version event per row with the row's
whole state (``HistoryLayer.snapshots``) and the change's cause and source (``nekomem.journal.causes``).
This is the write path every layer rides on, so it stays in the kernel; reading the versions back (a
row's history, the timeline, undo, restore, rollback) is the ``history`` app's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import Model, Q, QuerySet
from django.utils import timezone

from nekomem.journal.causes import current_cause, current_detail
from nekomem.journal.events import VERSION_EVENT
from nekomem.journal.models import Event
from nekomem.journal.redaction import events_redact
from nekomem.journal.registry import HistoryLayer, history_layer, history_layer_for_pool
from nekomem.statements import instances_insert


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
    detail = current_detail()
    extra = {"detail": detail} if detail else {}
    now = timezone.now()
    events = [
        Event(
            character_id=character_id,
            type=VERSION_EVENT,
            ts=now,
            payload={"pk": pk, "fields": found[pk][1] if pk in found else None, **extra},
            cause=cause,
            source=source,
            layer=layer.name,
            row=found[pk][0] if pk in found else last_ids.get(pk, ""),
        )
        for pk in pks
        if pk in found or pk in last_ids
    ]
    instances_insert(Event, events)  # one executemany, no query compilation on the write's path
    if gone and cause == "forget":
        for pk in gone:
            if pk in last_ids:
                versions_forget(character_id=character_id, layer=layer.name, row_id=last_ids[pk])


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
        if (
            isinstance(row, layer.row_type)
            and isinstance(row, Model)
            and row.pk in wanted
            and getattr(row, "character_id", None) == character_id
            and not row.get_deferred_fields()
        ):
            found[row.pk] = layer.held_snapshot(row)
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
