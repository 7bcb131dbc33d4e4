"""Reads of the history: a row's versions, a character's changes, its memory as it stood at a time.

A version is a ``memory.version`` event read back (``nekomem.journal.versions`` appends one for every
row a change reports, in the change's transaction); nothing else is stored for history.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from nekomem.journal.models import Event
from nekomem.journal.registry import HistoryLayer
from nekomem.journal.versions import version_events


@dataclass(frozen=True)
class Version:
    version: int  # 1 for the row's oldest kept version
    seq: int
    at: datetime
    cause: str
    source: str
    pk: int | None
    fields: dict[str, Any] | None  # None: the row was deleted by this change
    detail: str = ""  # the mechanism's action (refine: merge, split, modify, discard)

    def as_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "id": self.seq,
            "at": self.at,
            "cause": self.cause,
            "source": self.source,
            "detail": self.detail,
            "deleted": self.fields is None,
            "fields": self.fields,
        }


def _versions(events: Iterable[Event]) -> list[Version]:
    return [
        Version(
            version=number,
            seq=event.seq,
            at=event.ts,
            cause=event.cause,
            source=event.source,
            pk=event.payload.get("pk"),
            fields=event.payload.get("fields"),
            detail=str(event.payload.get("detail") or ""),
        )
        for number, event in enumerate(events, start=1)
    ]


def history_row_id(*, character_id: int, layer: str, row_id: str) -> str:
    """The row's history id for an id a client gave: the row's public id, or (for a layer whose rows have
    none but their primary key, persona corrections) the primary key a version recorded."""
    events = version_events(character_id=character_id).filter(layer=layer)
    if not row_id.isdigit() or events.filter(row=row_id).exists():
        return row_id
    named = events.filter(payload__pk=int(row_id)).order_by("-seq").values_list("row", flat=True).first()
    return named or row_id


def row_versions(*, character_id: int, layer: str, row_id: str) -> list[Version]:
    """The row's versions, oldest first."""
    events = version_events(character_id=character_id).filter(layer=layer, row=row_id).order_by("seq")
    return _versions(events)


def changes_list(
    *,
    character_id: int,
    since: datetime | None = None,
    until: datetime | None = None,
    layer: str | None = None,
    cause: str | None = None,
    source: str | None = None,
) -> QuerySet[Event]:
    """The character's changes (one per row and change), newest first."""
    events = version_events(character_id=character_id)
    if since is not None:
        events = events.filter(ts__gte=since)
    if until is not None:
        events = events.filter(ts__lt=until)
    if layer:
        events = events.filter(layer=layer)
    if cause:
        events = events.filter(cause=cause)
    if source:
        events = events.filter(source=source)
    return events.order_by("-seq")


def rows_changed_after(*, character_id: int, layer: str, at: datetime) -> list[str]:
    events = version_events(character_id=character_id).filter(layer=layer, ts__gt=at)
    return list(events.order_by().values_list("row", flat=True).distinct())


def row_state_at(*, character_id: int, layer: str, row_id: str, at: datetime) -> Version | None:
    """The row's latest version at ``at`` (None: no version then, so the row did not exist yet)."""
    event = (
        version_events(character_id=character_id)
        .filter(layer=layer, row=row_id, ts__lte=at)
        .order_by("-seq")
        .first()
    )
    return _versions([event])[0] if event is not None else None


def layer_as_of(*, character_id: int, layer: HistoryLayer, at: datetime) -> dict[str, dict[str, Any]]:
    """The layer's rows as they stood at ``at``: public id -> fields.

    A row no version touched since ``at`` is as it is now; any other row is its latest version at ``at``,
    or absent when it had none then (it was made later) or that version deleted it.
    """
    rows = {row_id: fields for row_id, (_, fields) in layer.current(character_id).items()}
    for row_id in rows_changed_after(character_id=character_id, layer=layer.name, at=at):
        then = row_state_at(character_id=character_id, layer=layer.name, row_id=row_id, at=at)
        if then is None or then.fields is None:
            rows.pop(row_id, None)
        else:
            rows[row_id] = then.fields
    return rows
