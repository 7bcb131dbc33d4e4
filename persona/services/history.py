"""Persona entries and queued corrections as the kernel's history sees them (issue 49): a row's state as
a version, and putting it back. An entry's version is the file entry without the vector, plus its
section, its place in it and whether it is archived; a correction's is its ``persona_corrections.json``
entry plus whether the resolver dropped it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils import timezone

from nekomem.characters.services import character_memory_changed
from nekomem.journal.registry import HistoryLayer
from nekomem.statements import instances_get
from nekomem.subjects import subject_key_from_extra, subject_key_from_section
from nekomem.timestamps import iso_local, parse_iso
from persona.models import CHANGE_POOL, CORRECTION_POOL, PersonaCorrection, PersonaEntry
from persona.services.archive import persona_shard_take
from persona.services.entries import entry_event, section_ensure
from persona.services.records import EMBEDDING_KEYS, entry_from_file_dict, entry_to_file_dict

_PLACE_KEYS = ("section", "position", "archived")


def entry_version_fields(entry: PersonaEntry) -> dict[str, Any]:
    fields = entry_to_file_dict(entry)
    for key in EMBEDDING_KEYS:  # the vector is not history (cheaper than copying the rest)
        fields.pop(key, None)
    fields["section"] = entry.section
    fields["position"] = entry.position
    fields["archived"] = bool(entry.archive_shard_path)
    return fields


def entry_snapshots(character_id: int, pks: Sequence[int]) -> dict[int, tuple[str, dict[str, Any]]]:
    # Without the ORM's query building: this read is on the path of every write it versions.
    rows = [row for row in instances_get(PersonaEntry, pks=pks) if row.character_id == character_id]
    return {row.pk: (row.entry_id, entry_version_fields(row)) for row in rows}


def entry_held_snapshot(entry: PersonaEntry) -> tuple[str, dict[str, Any]]:
    return entry.entry_id, entry_version_fields(entry)


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


def entry_subject(fields: dict[str, Any]) -> str:
    return subject_key_from_extra(fields) or subject_key_from_section(str(fields.get("section") or ""))


PERSONA_HISTORY = HistoryLayer(
    name="persona",
    pool=CHANGE_POOL,
    snapshots=entry_snapshots,
    current=entries_current,
    restore=entry_version_restore,
    archive=entry_version_archive,
    subject_of=entry_subject,
    held_snapshot=entry_held_snapshot,
    row_type=PersonaEntry,
)


# --- persona corrections: the queue's pairs (persona_corrections.json) ----------------------------------
# A pair's history id is its dedup key (the hash of its texts, entity and scope), not its primary key: the
# key is the same after an export and an import, so the history that travels finds its rows again. REST
# also finds a pair's history by its primary key (``history_row_id``).

_CORRECTION_DATABASE_KEYS = ("dropped_at", "subject_key", "dedup_key")


def correction_version_fields(correction: PersonaCorrection) -> dict[str, Any]:
    """The file entry, plus what only the database keeps (dropped by the resolver, its scope, its key)."""
    fields: dict[str, Any] = {
        **(correction.extra or {}),
        "old_text": correction.old_text,
        "new_text": correction.new_text,
        "entity": correction.entity,
        "created_at": iso_local(correction.created_at),
    }
    fields["resolve_attempts"] = correction.resolve_attempts
    fields["dropped_at"] = iso_local(correction.dropped_at)
    fields["subject_key"] = correction.subject_key
    fields["dedup_key"] = correction.dedup_key
    return fields


def correction_snapshots(character_id: int, pks: Sequence[int]) -> dict[int, tuple[str, dict[str, Any]]]:
    rows = PersonaCorrection.with_subjects.filter(character_id=character_id, pk__in=list(pks))
    return {row.pk: (row.dedup_key, correction_version_fields(row)) for row in rows}


def corrections_current(character_id: int) -> dict[str, tuple[int, dict[str, Any]]]:
    rows = PersonaCorrection.with_subjects.filter(character_id=character_id).order_by("pk")
    return {row.dedup_key: (row.pk, correction_version_fields(row)) for row in rows.iterator()}


def correction_version_restore(character_id: int, pk: int, fields: dict[str, Any]) -> None:
    """Put the pair back in the queue (under its old primary key when it is gone) as ``fields`` say; the
    caller holds the character's lock. A pair queued again since under the same key gives way."""
    extra = {
        k: v
        for k, v in fields.items()
        if k not in (*_CORRECTION_DATABASE_KEYS, "old_text", "new_text", "entity", "created_at")
        and k != "resolve_attempts"
    }
    correction = PersonaCorrection(
        pk=pk,
        character_id=character_id,
        old_text=str(fields.get("old_text") or ""),
        new_text=str(fields.get("new_text") or ""),
        entity=str(fields.get("entity") or ""),
        created_at=parse_iso(fields.get("created_at")) or timezone.now(),
        resolve_attempts=int(fields.get("resolve_attempts") or 0),
        dropped_at=parse_iso(fields.get("dropped_at")),
        dedup_key=str(fields.get("dedup_key") or ""),
        extra=extra,
        subject_key=str(fields.get("subject_key") or ""),
    )
    PersonaCorrection.with_subjects.filter(character_id=character_id, dedup_key=correction.dedup_key).exclude(
        pk=pk
    ).delete()
    exists = PersonaCorrection.with_subjects.filter(character_id=character_id, pk=pk).exists()
    correction.save(force_insert=not exists, force_update=exists)
    character_memory_changed(character_id=character_id, pool=CORRECTION_POOL, rows=[pk])


def correction_version_archive(character_id: int, row_id: str) -> None:
    """A pair an undo or a rollback unmakes leaves the queue; its history keeps it to put back."""
    pks = list(
        PersonaCorrection.with_subjects.filter(character_id=character_id, dedup_key=row_id).values_list(
            "pk", flat=True
        )
    )
    if pks:
        PersonaCorrection.with_subjects.filter(pk__in=pks).delete()
        character_memory_changed(character_id=character_id, pool=CORRECTION_POOL, rows=pks)


CORRECTIONS_HISTORY = HistoryLayer(
    name="corrections",  # under persona in REST: persona/corrections/{id}/history/
    pool=CORRECTION_POOL,
    snapshots=correction_snapshots,
    current=corrections_current,
    restore=correction_version_restore,
    archive=correction_version_archive,
    text_key="new_text",
    forget_keys=("old_text", "new_text"),
    subject_of=lambda fields: str(fields.get("subject_key") or ""),
    row_type=PersonaCorrection,
)
