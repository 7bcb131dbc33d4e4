"""Reflections as the kernel's history sees them (issue 49): a reflection's state as a version, and
putting it back. A version is the file entry without the vector, plus whether it is archived."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils import timezone

from nekomem.characters.services import character_memory_changed
from nekomem.journal.registry import HistoryLayer
from nekomem.statements import instances_get
from reflections.models import RECALL_POOL, Reflection
from reflections.services.archive import reflection_archive_into_shard
from reflections.services.records import EMBEDDING_KEYS, reflection_from_file_dict, reflection_to_file_dict

_DERIVED_KEYS = ("archived",)


def reflection_version_fields(reflection: Reflection) -> dict[str, Any]:
    fields = reflection_to_file_dict(reflection)
    for key in EMBEDDING_KEYS:  # the vector is not history (cheaper than copying the rest)
        fields.pop(key, None)
    fields["archived"] = (
        bool(reflection.archive_shard_path) or reflection.status == Reflection.Status.ARCHIVED
    )
    return fields


def reflection_snapshots(character_id: int, pks: Sequence[int]) -> dict[int, tuple[str, dict[str, Any]]]:
    # Without the ORM's query building: this read is on the path of every write it versions.
    rows = [row for row in instances_get(Reflection, pks=pks) if row.character_id == character_id]
    return {row.pk: (row.reflection_id, reflection_version_fields(row)) for row in rows}


def reflection_held_snapshot(reflection: Reflection) -> tuple[str, dict[str, Any]]:
    return reflection.reflection_id, reflection_version_fields(reflection)


def reflections_current(character_id: int) -> dict[str, tuple[int, dict[str, Any]]]:
    rows = Reflection.with_subjects.filter(character_id=character_id).order_by("pk")
    return {row.reflection_id: (row.pk, reflection_version_fields(row)) for row in rows.iterator()}


def reflection_version_restore(character_id: int, pk: int, fields: dict[str, Any]) -> None:
    """Make the reflection (by primary key, re-created when gone) hold ``fields`` again, its evidence
    included; the caller holds the character's lock."""
    entry = {k: v for k, v in fields.items() if k not in _DERIVED_KEYS}
    reflection = reflection_from_file_dict(entry, character_id=character_id)
    reflection.pk = pk
    existing = Reflection.with_subjects.filter(character_id=character_id, pk=pk).first()
    if existing is not None and existing.text == reflection.text:  # the vector still describes this text
        for key in EMBEDDING_KEYS:
            setattr(reflection, key, getattr(existing, key))
    reflection.updated_at = timezone.now()
    reflection.save(force_insert=existing is None, force_update=existing is not None)
    character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=[pk])


def reflection_version_archive(character_id: int, reflection_id: str) -> None:
    reflection = Reflection.with_subjects.filter(
        character_id=character_id, reflection_id=reflection_id, archive_shard_path__isnull=True
    ).first()
    if reflection is not None:
        reflection_archive_into_shard(reflection=reflection, now=timezone.now(), reason="undo")


REFLECTIONS_HISTORY = HistoryLayer(
    name="reflections",
    pool=RECALL_POOL,
    snapshots=reflection_snapshots,
    current=reflections_current,
    restore=reflection_version_restore,
    archive=reflection_version_archive,
    held_snapshot=reflection_held_snapshot,
    row_type=Reflection,
)
