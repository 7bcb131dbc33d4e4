"""Persona entries as the kernel's history sees them (issue 49): an entry's state as a version, and
putting it back. A version is the file entry without the vector, plus its section, its place in it and
whether it is archived."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils import timezone

from nekomem.characters.services import character_memory_changed
from nekomem.journal.registry import HistoryLayer
from nekomem.statements import instances_get
from persona.models import CHANGE_POOL, PersonaEntry
from persona.services.archive import persona_shard_take
from persona.services.entries import entry_event, section_ensure
from persona.services.records import EMBEDDING_KEYS, entry_from_file_dict, entry_to_file_dict

_PLACE_KEYS = ("section", "position", "archived")


def entry_version_fields(entry: PersonaEntry) -> dict[str, Any]:
    fields = {k: v for k, v in entry_to_file_dict(entry).items() if k not in EMBEDDING_KEYS}
    fields["section"] = entry.section
    fields["position"] = entry.position
    fields["archived"] = bool(entry.archive_shard_path)
    return fields


def entry_snapshots(character_id: int, pks: Sequence[int]) -> dict[int, tuple[str, dict[str, Any]]]:
    # Without the ORM's query building: this read is on the path of every write it versions.
    rows = [row for row in instances_get(PersonaEntry, pks=pks) if row.character_id == character_id]
    return {row.pk: (row.entry_id, entry_version_fields(row)) for row in rows}


def entries_current(character_id: int) -> dict[str, tuple[int, dict[str, Any]]]:
    rows = PersonaEntry.with_subjects.filter(character_id=character_id).order_by("pk")
    return {row.entry_id: (row.pk, entry_version_fields(row)) for row in rows.iterator()}


def entry_version_restore(character_id: int, pk: int, fields: dict[str, Any]) -> None:
    """Make the entry (by primary key, re-created when gone) hold ``fields`` again, its evidence and
    section included; the caller holds the character's lock."""
    section = str(fields.get("section") or "master")
    section_ensure(character_id=character_id, key=section)
    raw = {k: v for k, v in fields.items() if k not in _PLACE_KEYS}
    entry = entry_from_file_dict(
        raw, character_id=character_id, section=section, position=int(fields.get("position") or 0)
    )
    entry.pk = pk
    existing = PersonaEntry.with_subjects.filter(character_id=character_id, pk=pk).first()
    if existing is not None and existing.text == entry.text:  # the vector still describes this text
        for key in EMBEDDING_KEYS:
            setattr(entry, key, getattr(existing, key))
    entry.updated_at = timezone.now()
    entry.save(force_insert=existing is None, force_update=existing is not None)
    entry_event(entry, "persona.entry_updated", reason="history_restore")
    character_memory_changed(character_id=character_id, pool=CHANGE_POOL, rows=[pk])


def entry_version_archive(character_id: int, entry_id: str) -> None:
    entry = PersonaEntry.with_subjects.filter(
        character_id=character_id, entry_id=entry_id, archive_shard_path__isnull=True
    ).first()
    if entry is None:
        return
    now = timezone.now()
    entry.archive_shard_path = persona_shard_take(character_id=character_id, now=now)
    entry.archived_at = now
    entry.save(update_fields=["archive_shard_path", "archived_at", "updated_at"])
    entry_event(entry, "persona.entry_updated", reason="history_archive")
    character_memory_changed(character_id=character_id, pool=CHANGE_POOL, rows=[entry.pk])


PERSONA_HISTORY = HistoryLayer(
    name="persona",
    pool=CHANGE_POOL,
    snapshots=entry_snapshots,
    current=entries_current,
    restore=entry_version_restore,
    archive=entry_version_archive,
)
