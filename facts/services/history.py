"""Facts as the kernel's history sees them (issue 49): a fact's state as a version, and putting it back.

A version is the fact's file entry without its vector (the backfill re-embeds a restored text), plus
whether it is archived, which only the database keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils import timezone

from facts.models import RECALL_POOL, Fact
from facts.services.records import EMBEDDING_KEYS, fact_from_file_dict, fact_to_file_dict
from facts.services.tokens import fact_index_add
from nekomem.characters.locks import lock_character
from nekomem.characters.services import character_memory_changed
from nekomem.journal.registry import HistoryLayer
from nekomem.statements import instances_get
from nekomem.timestamps import iso_local, parse_iso

_DATABASE_KEYS = ("archived", "archived_at")


def fact_version_fields(fact: Fact) -> dict[str, Any]:
    fields = fact_to_file_dict(fact)
    for key in EMBEDDING_KEYS:  # the vector is not history (cheaper than copying the rest)
        fields.pop(key, None)
    fields["archived"] = fact.archived
    fields["archived_at"] = iso_local(fact.archived_at)
    return fields


def fact_snapshots(character_id: int, pks: Sequence[int]) -> dict[int, tuple[str, dict[str, Any]]]:
    # Without the ORM's query building: this read is on the path of every write it versions.
    facts = [row for row in instances_get(Fact, pks=pks) if row.character_id == character_id]
    return {fact.pk: (fact.fact_id, fact_version_fields(fact)) for fact in facts}


def fact_held_snapshot(fact: Fact) -> tuple[str, dict[str, Any]]:
    return fact.fact_id, fact_version_fields(fact)


def facts_current(character_id: int) -> dict[str, tuple[int, dict[str, Any]]]:
    facts = Fact.with_subjects.filter(character_id=character_id).order_by("pk")
    return {fact.fact_id: (fact.pk, fact_version_fields(fact)) for fact in facts.iterator()}


def fact_version_restore(character_id: int, pk: int, fields: dict[str, Any]) -> None:
    """Make the fact (by primary key, re-created when it is gone) hold ``fields`` again; the caller holds
    the character's lock."""
    character = lock_character(character_id)
    entry = {k: v for k, v in fields.items() if k not in _DATABASE_KEYS}
    fact = fact_from_file_dict(entry, character_id=character_id, archived=bool(fields.get("archived")))
    fact.archived_at = parse_iso(fields.get("archived_at")) if fact.archived else None
    fact.pk = pk
    existing = Fact.with_subjects.filter(character_id=character_id, pk=pk).first()
    if existing is not None and existing.text == fact.text:  # the vector still describes this text
        fact.embedding = existing.embedding
        fact.embedding_text_sha256 = existing.embedding_text_sha256
        fact.embedding_model_id = existing.embedding_model_id
    fact.updated_at = timezone.now()
    fact.save(force_insert=existing is None, force_update=existing is not None)
    fact_index_add(fact=fact, stop_names=character.stop_names)
    character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=[pk])


def fact_version_archive(character_id: int, fact_id: str) -> None:
    now = timezone.now()
    changed = list(
        Fact.with_subjects.filter(character_id=character_id, fact_id=fact_id, archived=False).values_list(
            "pk", flat=True
        )
    )
    if changed:
        Fact.with_subjects.filter(pk__in=changed).update(archived=True, archived_at=now, updated_at=now)
        character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=changed)


FACTS_HISTORY = HistoryLayer(
    name="facts",
    pool=RECALL_POOL,
    snapshots=fact_snapshots,
    current=facts_current,
    restore=fact_version_restore,
    archive=fact_version_archive,
    held_snapshot=fact_held_snapshot,
    row_type=Fact,
)
