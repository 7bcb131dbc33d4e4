"""``facts.json`` and ``facts_archive.json`` for the import/export commands (reference §2.4–2.5).

Import keeps facts exactly as the files hold them (ids, hashes, times, flags; no LLM dedup): only
the same ``id`` is merged, with the original's rule that one-way flags already set are never
cleared. A fact found in both files is archived, as the original's readers merge by id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone

from facts.models import Fact
from facts.services.records import EMBEDDING_KEYS, FILE_KEYS, fact_from_file_dict, fact_to_file_dict
from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.portability import (
    FileHandler,
    ImportResult,
    MalformedFile,
    progress,
    read_json,
    register_file_handler,
    write_json,
)

BATCH = 2000
# Compared to decide whether a re-imported entry changes anything (idempotent import).
_FIELDS = (*(key for key in FILE_KEYS if key != "id"), "archived", *EMBEDDING_KEYS, "extra")
_ONE_WAY = ("absorbed", "signal_processed", "archived")


def _parse(path: Path, *, character_id: int, archived: bool) -> dict[str, Fact]:
    """Every entry parsed before anything is written; the first bad one refuses the whole file."""
    data = read_json(path)
    if not isinstance(data, list):
        raise MalformedFile(path, f"expected a JSON list of facts, got {type(data).__name__}")
    parsed: dict[str, Fact] = {}
    for index, entry in enumerate(progress(data, total=len(data), desc=f"parse {path.name}")):
        try:
            fact = fact_from_file_dict(entry, character_id=character_id, archived=archived)
        except (ValueError, TypeError) as exc:
            label = entry.get("id") if isinstance(entry, dict) else None
            raise MalformedFile(path, str(exc), entry=f"#{index}" + (f" ({label})" if label else "")) from exc
        previous = parsed.get(fact.fact_id)
        if previous is not None:
            _keep_one_way(fact, previous)
        parsed[fact.fact_id] = fact
    return parsed


def _keep_one_way(fact: Fact, before: Fact) -> None:
    for name in _ONE_WAY:
        setattr(fact, name, getattr(fact, name) or getattr(before, name))


def _existing(*, character_id: int, fact_ids: list[str]) -> dict[str, Fact]:
    facts = Fact.objects.filter(character_id=character_id)
    # A long IN list is slower (and hits SQLite's variable limit) than reading the whole character.
    if len(fact_ids) <= 900:
        facts = facts.filter(fact_id__in=fact_ids)
    return {f.fact_id: f for f in facts.iterator(chunk_size=BATCH)}


def _import(character: Character, path: Path, *, archived: bool) -> ImportResult:
    incoming = _parse(path, character_id=character.pk, archived=archived)
    created = updated = unchanged = 0
    now = timezone.now()
    with transaction.atomic():
        lock_character(character.pk)
        existing = _existing(character_id=character.pk, fact_ids=list(incoming))
        new: list[Fact] = []
        changed: list[Fact] = []
        for fact_id, fact in incoming.items():
            current = existing.get(fact_id)
            if current is None:
                fact.archived_at = now if fact.archived else None
                new.append(fact)
                continue
            _keep_one_way(fact, current)
            if all(getattr(fact, name) == getattr(current, name) for name in _FIELDS):
                unchanged += 1
                continue
            for name in _FIELDS:
                setattr(current, name, getattr(fact, name))
            current.archived_at = current.archived_at or (now if current.archived else None)
            current.updated_at = now
            changed.append(current)
        Fact.objects.bulk_create(new, batch_size=BATCH)
        Fact.objects.bulk_update(changed, [*_FIELDS, "archived_at", "updated_at"], batch_size=BATCH)
        created, updated = len(new), len(changed)
    return ImportResult(created=created, updated=updated, unchanged=unchanged)


def _export(character: Character, path: Path, *, archived: bool) -> int:
    facts = Fact.objects.filter(character_id=character.pk, archived=archived).order_by("pk")
    total = facts.count()
    # pk order is insertion order, so an imported file comes back in its own order.
    records: list[dict[str, Any]] = [
        fact_to_file_dict(f) for f in progress(facts.iterator(chunk_size=BATCH), total=total, desc=path.name)
    ]
    write_json(path, records)
    return len(records)


register_file_handler(
    FileHandler(
        filename="facts.json",
        order=30,
        importer=lambda c, p: _import(c, p, archived=False),
        exporter=lambda c, p: _export(c, p, archived=False),
    )
)
register_file_handler(
    FileHandler(
        filename="facts_archive.json",
        order=31,
        importer=lambda c, p: _import(c, p, archived=True),
        exporter=lambda c, p: _export(c, p, archived=True),
    )
)
