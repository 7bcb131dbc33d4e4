"""``reflections.json``, ``reflection_archive/`` and ``surfaced.json`` for the import/export commands
(reference §2.7–2.9).

Entries keep exactly what the files hold: raw reinforcement and disputation (never decayed), every
stamp, the shard each archived entry lives in, and unknown keys. Importing the same directory twice
changes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.db import transaction
from django.db.models import Count

from facts.services import iso_local, parse_iso
from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.portability import (
    FileHandler,
    ImportResult,
    MalformedFile,
    read_json,
    register_file_handler,
    write_json,
)
from reflections.models import ArchiveShard, Reflection, SurfacedReflection
from reflections.selectors import reflections_in_file, reflections_in_shards, surfaced_list
from reflections.services.records import MODEL_FIELDS, reflection_from_file_dict, reflection_to_file_dict

ARCHIVE_DIR = "reflection_archive"


def _parse(path: Path, data: Any, *, character_id: int, shard: str | None) -> list[Reflection]:
    if not isinstance(data, list):
        raise MalformedFile(path, f"expected a JSON list of reflections, got {type(data).__name__}")
    parsed: list[Reflection] = []
    for index, entry in enumerate(data):
        try:
            reflection = reflection_from_file_dict(entry, character_id=character_id)
        except (ValueError, TypeError) as exc:
            label = entry.get("id") if isinstance(entry, dict) else None
            raise MalformedFile(path, str(exc), entry=f"#{index}" + (f" ({label})" if label else "")) from exc
        if shard is not None and not reflection.archive_shard_path:
            reflection.archive_shard_path = shard
        parsed.append(reflection)
    return parsed


def _upsert(character: Character, incoming: list[Reflection]) -> ImportResult:
    created = updated = unchanged = 0
    with transaction.atomic():
        lock_character(character.pk)
        existing = {
            r.reflection_id: r
            for r in Reflection.objects.filter(
                character_id=character.pk, reflection_id__in=[r.reflection_id for r in incoming]
            )
        }
        new: list[Reflection] = []
        changed: list[Reflection] = []
        for reflection in incoming:
            current = existing.get(reflection.reflection_id)
            if current is None:
                new.append(reflection)
                existing[reflection.reflection_id] = reflection
                continue
            if all(getattr(current, f) == getattr(reflection, f) for f in MODEL_FIELDS):
                unchanged += 1
                continue
            for f in MODEL_FIELDS:
                setattr(current, f, getattr(reflection, f))
            changed.append(current)
        Reflection.objects.bulk_create(new, batch_size=1000)
        Reflection.objects.bulk_update(changed, list(MODEL_FIELDS), batch_size=1000)
        _shards_recount(character_id=character.pk)
        created, updated = len(new), len(changed)
    return ImportResult(created=created, updated=updated, unchanged=unchanged)


def _shard_file_name(path: str) -> str:
    return Path(path).name


def _shards_recount(*, character_id: int) -> None:
    sizes = dict(
        Reflection.objects.filter(character_id=character_id, archive_shard_path__isnull=False)
        .values_list("archive_shard_path")
        .annotate(n=Count("pk"))
        .values_list("archive_shard_path", "n")
    )
    by_name: dict[str, int] = {}
    for path, n in sizes.items():
        if not path:
            continue
        by_name[_shard_file_name(path)] = by_name.get(_shard_file_name(path), 0) + n
    for name, n in by_name.items():
        shard, _ = ArchiveShard.objects.get_or_create(
            character_id=character_id, name=name, defaults={"created_at": _shard_date(name), "size": n}
        )
        if shard.size != n:
            ArchiveShard.objects.filter(pk=shard.pk).update(size=n)


def _shard_date(name: str) -> Any:
    try:
        return parse_iso(name[:10] + "T00:00:00")
    except ValueError:
        from django.utils import timezone

        return timezone.now()


def import_reflections(character: Character, path: Path) -> ImportResult:
    return _upsert(character, _parse(path, read_json(path), character_id=character.pk, shard=None))


def export_reflections(character: Character, path: Path) -> int:
    records = [reflection_to_file_dict(r) for r in reflections_in_file(character_id=character.pk)]
    if not records and not path.exists():
        return 0
    write_json(path, records)
    return len(records)


def import_archive(character: Character, folder: Path) -> ImportResult:
    if not folder.is_dir():
        raise MalformedFile(folder, "expected a directory of shard files")
    incoming: list[Reflection] = []
    for shard_path in sorted(folder.glob("*.json")):
        incoming += _parse(
            shard_path, read_json(shard_path), character_id=character.pk, shard=shard_path.name
        )
    return _upsert(character, incoming)


def export_archive(character: Character, folder: Path) -> int:
    shards = reflections_in_shards(character_id=character.pk)
    written = 0
    for path, reflections in shards.items():
        write_json(folder / _shard_file_name(path), [reflection_to_file_dict(r) for r in reflections])
        written += len(reflections)
    return written


# --- surfaced.json --------------------------------------------------------------------------------------


def surfaced_to_file_dict(entry: SurfacedReflection) -> dict[str, Any]:
    return {
        "reflection_id": entry.reflection_id,
        "text": entry.text,
        "surfaced_at": iso_local(entry.surfaced_at),
        "feedback": entry.feedback,
    }


def _surfaced_from_file_dict(entry: Any, *, character_id: int) -> SurfacedReflection:
    if not isinstance(entry, dict):
        raise ValueError(f"expected an object, got {type(entry).__name__}")
    rid, text = entry.get("reflection_id"), entry.get("text")
    if not isinstance(rid, str) or not rid:
        raise ValueError("missing or non-string 'reflection_id'")
    if not isinstance(text, str):
        raise ValueError("missing or non-string 'text'")
    surfaced_at = parse_iso(entry.get("surfaced_at"))
    if surfaced_at is None:
        raise ValueError("missing 'surfaced_at'")
    feedback = entry.get("feedback")
    if feedback is not None and feedback not in Reflection.Feedback.values:
        raise ValueError(f"unknown feedback {feedback!r}")
    return SurfacedReflection(
        character_id=character_id, reflection_id=rid, text=text, surfaced_at=surfaced_at, feedback=feedback
    )


def import_surfaced(character: Character, path: Path) -> ImportResult:
    data = read_json(path)
    if not isinstance(data, list):
        raise MalformedFile(path, f"expected a JSON list, got {type(data).__name__}")
    incoming = []
    for index, entry in enumerate(data):
        try:
            incoming.append(_surfaced_from_file_dict(entry, character_id=character.pk))
        except (ValueError, TypeError) as exc:
            raise MalformedFile(path, str(exc), entry=f"#{index}") from exc
    created = updated = unchanged = 0
    with transaction.atomic():
        lock_character(character.pk)
        known = {(s.reflection_id, s.surfaced_at): s for s in surfaced_list(character_id=character.pk)}
        for row in incoming:
            current = known.get((row.reflection_id, row.surfaced_at))
            if current is None:
                row.save()
                known[(row.reflection_id, row.surfaced_at)] = row
                created += 1
            elif (current.text, current.feedback) == (row.text, row.feedback):
                unchanged += 1
            else:
                current.text, current.feedback = row.text, row.feedback
                current.save(update_fields=["text", "feedback"])
                updated += 1
    return ImportResult(created=created, updated=updated, unchanged=unchanged)


def export_surfaced(character: Character, path: Path) -> int:
    records = [surfaced_to_file_dict(s) for s in surfaced_list(character_id=character.pk)]
    if not records and not path.exists():
        return 0
    write_json(path, records)
    return len(records)


register_file_handler(
    FileHandler(
        filename="reflections.json", order=40, importer=import_reflections, exporter=export_reflections
    )
)
register_file_handler(
    FileHandler(filename=ARCHIVE_DIR, order=41, importer=import_archive, exporter=export_archive)
)
register_file_handler(
    FileHandler(filename="surfaced.json", order=42, importer=import_surfaced, exporter=export_surfaced)
)
