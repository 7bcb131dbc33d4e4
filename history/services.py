"""Writes of the history (issue 49): restoring a version, undoing a source, rolling back to a time.

The journal records the versions (``nekomem.journal.versions``: one ``memory.version`` event per row a
change reports, in the change's transaction). Undo, restore and rollback read those versions back and
hand them to the layer's registered ``restore``/``archive``, which report their own change in turn: every
undo is a change with versions of its own, so it can be undone too.

Never silently overwriting: a restore is refused when a person changed the row after the version asked
for, and an undo leaves out (and names) every row changed again after the change it takes back, unless
``force``. A version whose text is blank was forgotten: it is never put back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction

from history.selectors import Version, row_state_at, row_versions, rows_changed_after
from nekomem.characters.locks import lock_character
from nekomem.errors import Conflict
from nekomem.journal.causes import PERSON_CAUSES, change_cause, new_source
from nekomem.journal.registry import HistoryLayer, history_layer, history_layers
from nekomem.journal.versions import version_events, versions_record

logger = logging.getLogger(__name__)


class HistoryRefused(Conflict):
    """A restore or undo that would lose something (HTTP 409 with ``reason``)."""

    def __init__(self, reason: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.reason = reason
        self.details = details


class NoSuchVersion(LookupError):
    pass


def _layer(name: str) -> HistoryLayer:
    layer = history_layer(name)
    if layer is None:
        raise NoSuchVersion(f"no history layer {name!r}")
    return layer


def _forgotten(layer: HistoryLayer, fields: dict[str, Any]) -> bool:
    return not str(fields.get(layer.text_key) or "").strip()


def _put_back(layer: HistoryLayer, character_id: int, version: Version) -> None:
    if version.pk is None or version.fields is None:
        raise HistoryRefused("deleted", "that version is the row's deletion")
    if _forgotten(layer, version.fields):
        raise HistoryRefused("forgotten", "that version was forgotten; its text is not kept")
    layer.restore(character_id, version.pk, version.fields)


@dataclass(frozen=True)
class Restored:
    version: int
    source: str
    fields: dict[str, Any]


def row_restore(*, character_id: int, layer: str, row_id: str, version: int, force: bool = False) -> Restored:
    """Put the row back to one of its versions; the restore is a change of its own (cause ``restore``).

    Refused (``HistoryRefused``, reason ``edited_since``) when a person changed the row after that version
    (a browser or REST edit, MCP …), unless ``force``: machines' later changes are what a restore takes
    back, a person's are not overwritten without being asked."""
    history = _layer(layer)
    with transaction.atomic():
        lock_character(character_id)
        versions = row_versions(character_id=character_id, layer=layer, row_id=row_id)
        chosen = next((v for v in versions if v.version == version), None)
        if chosen is None:
            raise NoSuchVersion(f"{layer} {row_id} has no version {version}")
        later = [v.version for v in versions[version:] if v.cause in PERSON_CAUSES and v.cause != "forget"]
        if later and not force:
            raise HistoryRefused(
                "edited_since",
                f"changed by hand after version {version} (versions {later}); send force to overwrite",
                versions=later,
            )
        if chosen.fields == versions[-1].fields:
            return Restored(version=version, source="", fields=chosen.fields or {})
        with change_cause("restore", source=new_source("restore")) as source:
            _put_back(history, character_id, chosen)
    return Restored(version=version, source=source, fields=chosen.fields or {})


@dataclass
class UndoReport:
    source: str = ""  # the undo's own source: undo it to take the undo back
    restored: list[dict[str, str]] = field(default_factory=list)
    archived: list[dict[str, str]] = field(default_factory=list)
    conflicts: list[dict[str, str]] = field(default_factory=list)
    forgotten: list[dict[str, str]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "restored": self.restored,
            "archived": self.archived,
            "conflicts": self.conflicts,
            "forgotten": self.forgotten,
        }


def changes_undo(
    *, character_id: int, source: str | None = None, change_id: int | None = None, force: bool = False
) -> UndoReport:
    """Take back every change of ``source`` (a job, pass, request or import), or the one change
    ``change_id``: each row goes back to its version before, and a row the changes made is archived.

    A row changed again afterwards by someone else is left as it is and listed in ``conflicts`` (unless
    ``force``); a row whose earlier version was forgotten stays forgotten (``forgotten``)."""
    if (source is None) == (change_id is None):
        raise ValueError("give exactly one of source and id")
    report = UndoReport()
    with transaction.atomic():
        lock_character(character_id)
        taken = version_events(character_id=character_id)
        taken = taken.filter(source=source) if source is not None else taken.filter(seq=change_id or 0)
        spans: dict[tuple[str, str], tuple[int, int]] = {}
        for layer_name, row, seq in taken.order_by("seq").values_list("layer", "row", "seq"):
            first, _ = spans.get((layer_name, row), (seq, seq))
            spans[(layer_name, row)] = (first, seq)
        if not spans:
            raise NoSuchVersion("no change with that source or id")
        with change_cause("undo", source=new_source("undo")) as undo_source:
            report.source = undo_source
            for (layer_name, row), (first, last) in spans.items():
                layer = history_layer(layer_name)
                if layer is None:
                    continue
                named = {"layer": layer_name, "row_id": row}
                rows = version_events(character_id=character_id).filter(layer=layer_name, row=row)
                after = rows.filter(seq__gt=last)
                if source is not None:
                    after = after.exclude(source=source)
                if not force and after.exists():
                    report.conflicts.append(named)
                    continue
                before = rows.filter(seq__lt=first).order_by("-seq").first()
                fields = before.payload.get("fields") if before is not None else None
                pk = before.payload.get("pk") if before is not None else None
                if fields is None or pk is None:
                    layer.archive(character_id, row)
                    report.archived.append(named)
                elif _forgotten(layer, fields):
                    report.forgotten.append(named)
                else:
                    layer.restore(character_id, pk, fields)
                    report.restored.append(named)
    logger.info(
        "undo character=%s restored=%d archived=%d conflicts=%d",
        character_id,
        len(report.restored),
        len(report.archived),
        len(report.conflicts),
    )
    return report


@dataclass
class RollbackReport:
    source: str = ""
    restored: int = 0
    archived: int = 0
    forgotten: int = 0
    layers: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "restored": self.restored,
            "archived": self.archived,
            "forgotten": self.forgotten,
            "layers": self.layers,
        }


def memory_rollback(
    *,
    character_id: int,
    at: datetime,
    progress: Callable[[str, int, int], None] | None = None,
) -> RollbackReport:
    """Return every memory layer to its state at ``at``: each row changed since goes back to its version
    then, a row made since is archived. The raw log, the user's own record, is not a layer and is not
    touched. One transaction: a rollback happens whole or not at all, and can itself be rolled back."""
    report = RollbackReport()
    with transaction.atomic():
        lock_character(character_id)
        with change_cause("rollback", source=new_source("rollback")) as source:
            report.source = source
            for layer in history_layers():
                rows = rows_changed_after(character_id=character_id, layer=layer.name, at=at)
                current = {row: fields for row, (_, fields) in layer.current(character_id).items()}
                touched = 0
                for done, row in enumerate(sorted(rows), start=1):
                    then = row_state_at(character_id=character_id, layer=layer.name, row_id=row, at=at)
                    if then is None or then.fields is None or then.pk is None:
                        live = current.get(row)
                        if live is not None and not _archived(live):
                            layer.archive(character_id, row)
                            report.archived += 1
                            touched += 1
                    elif _forgotten(layer, then.fields):
                        report.forgotten += 1
                    elif current.get(row) != then.fields:
                        layer.restore(character_id, then.pk, then.fields)
                        report.restored += 1
                        touched += 1
                    if progress is not None:
                        progress(layer.name, done, len(rows))
                report.layers[layer.name] = touched
    logger.info(
        "rollback character=%s restored=%d archived=%d", character_id, report.restored, report.archived
    )
    return report


ARCHIVED_KEY = "archived"


def _archived(fields: dict[str, Any]) -> bool:
    """Layers put whether a row is out of the live memory under ``archived`` in its fields."""
    return bool(fields.get(ARCHIVED_KEY))


def history_baseline(*, character_id: int, layers: Sequence[str] | None = None) -> int:
    """Give every row with no version yet one (cause ``baseline``), so that an undo or a rollback of its
    first recorded change can put back the state it had before history began. Returns how many."""
    written = 0
    with transaction.atomic():
        lock_character(character_id)
        for layer in history_layers():
            if layers is not None and layer.name not in layers:
                continue
            known = set(
                version_events(character_id=character_id)
                .filter(layer=layer.name)
                .values_list("row", flat=True)
                .distinct()
            )
            pks = [pk for row, (pk, _) in layer.current(character_id).items() if row not in known]
            if not pks:
                continue
            with change_cause("baseline", source=new_source("baseline")):
                versions_record(character_id, layer.pool, pks)
            written += len(pks)
    return written
