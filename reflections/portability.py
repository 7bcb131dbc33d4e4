"""``reflections.json``, ``reflection_archive/``, ``surfaced.json`` and ``cursors.json`` for import and
export (reference §2.7–2.9, §2.12).

Entries keep exactly what the files hold: raw reinforcement and disputation (never decayed), every
stamp, the shard each archived entry lives in, and unknown keys. Importing the same directory twice
changes nothing.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db.models import Count

from facts.selectors import extraction_cursor
from facts.services import extraction_coverage_set
from nekomem.characters.models import Character
from nekomem.portability import (
    UNBOUND_CHARACTER,
    FileHandler,
    ImportResult,
    MalformedFile,
    read_json,
    register_file_handler,
    rows_upsert,
    write_json,
    write_records,
)
from nekomem.timestamps import iso_local, parse_iso
from reflections.models import RECALL_POOL, ArchiveShard, Reflection, ReflectionCursor, SurfacedReflection
from reflections.selectors import reflections_in_file, reflections_in_shards, surfaced_list
from reflections.services.records import MODEL_FIELDS, reflection_from_file_dict, reflection_to_file_dict

ARCHIVE_DIR = "reflection_archive"


def _parse(path: Path, data: Any, *, shard: str | None) -> list[Reflection]:
    if not isinstance(data, list):
        raise MalformedFile(path, f"expected a JSON list of reflections, got {type(data).__name__}")
    parsed: list[Reflection] = []
    for index, entry in enumerate(data):
        try:
            reflection = reflection_from_file_dict(entry, character_id=UNBOUND_CHARACTER)
        except (ValueError, TypeError) as exc:
            label = entry.get("id") if isinstance(entry, dict) else None
            raise MalformedFile(path, str(exc), entry=f"#{index}" + (f" ({label})" if label else "")) from exc
        if shard is not None and not reflection.archive_shard_path:
            reflection.archive_shard_path = shard
        if not any(key in entry for key in EVIDENCE_FIELDS):
            reflection._before_evidence = True  # type: ignore[attr-defined]
        parsed.append(reflection)
    return parsed


# An entry written before the evidence fields existed has none of these keys.
EVIDENCE_FIELDS = ("reinforcement", "disputation", "rein_last_signal_at", "disp_last_signal_at")


def _evidence_kept(character: Character, incoming: list[Reflection]) -> None:
    """A file from before the evidence fields holds no evidence: importing it again must not erase
    the evidence seeded (or gathered) since, so such entries keep what is stored."""
    old = [r for r in incoming if getattr(r, "_before_evidence", False)]
    if not old:
        return
    stored = {
        r.reflection_id: r
        for r in Reflection.with_subjects.filter(
            character_id=character.pk, reflection_id__in=[r.reflection_id for r in old]
        )
    }
    for reflection in old:
        if (current := stored.get(reflection.reflection_id)) is not None:
            for name in EVIDENCE_FIELDS:
                setattr(reflection, name, getattr(current, name))


def _upsert(character: Character, incoming: list[Reflection]) -> ImportResult:
    _evidence_kept(character, incoming)
    result = rows_upsert(
        Reflection,
        character=character,
        incoming=incoming,
        key="reflection_id",
        fields=MODEL_FIELDS,
        pool=RECALL_POOL,
    )
    _shards_recount(character_id=character.pk)
    return result


def _shard_file_name(path: str) -> str:
    return Path(path).name


def _shards_recount(*, character_id: int) -> None:
    sizes = dict(
        Reflection.with_subjects.filter(character_id=character_id, archive_shard_path__isnull=False)
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


def read_reflections(path: Path) -> list[Reflection]:
    return _parse(path, read_json(path), shard=None)


def export_reflections(character: Character, path: Path) -> int | None:
    return write_records(
        path, [reflection_to_file_dict(r) for r in reflections_in_file(character_id=character.pk)]
    )


def read_archive(folder: Path) -> list[Reflection]:
    if not folder.is_dir():
        raise MalformedFile(folder, "expected a directory of shard files")
    incoming: list[Reflection] = []
    for shard_path in sorted(folder.glob("*.json")):
        incoming += _parse(shard_path, read_json(shard_path), shard=shard_path.name)
    return incoming


def export_archive(character: Character, folder: Path) -> int | None:
    shards = reflections_in_shards(character_id=character.pk)
    if not shards:
        return None
    written = 0
    for path, reflections in shards.items():
        write_json(folder / _shard_file_name(path), [reflection_to_file_dict(r) for r in reflections])
        written += len(reflections)
    return written


# --- the legacy flat reflections_archive.json (§2.8) ------------------------------------------------

LEGACY_FLAT_ARCHIVE = "reflections_archive.json"
# The original leaves this in reflection_archive/ once it moved the flat file into shards.
FLAT_MIGRATED_SENTINEL = ".migrated_from_flat"
SHARD_MAX_ENTRIES = 500


def _flat_shard_name(chunk: list[Reflection]) -> str:
    """``<YYYY-MM-DD>_<8 hex>.json``, the same for the same entries, so a second import moves nothing."""
    first = min(r.archived_at or r.created_at for r in chunk)
    digest = hashlib.sha256("\x00".join(r.reflection_id for r in chunk).encode()).hexdigest()[:8]
    return f"{first.date().isoformat()}_{digest}.json"


def read_flat_archive(path: Path) -> list[Reflection]:
    """An old install's one-file archive, read into shards of at most 500 as the original migrates it;
    nothing when the original already moved it (its sentinel is there)."""
    if (path.parent / ARCHIVE_DIR / FLAT_MIGRATED_SENTINEL).exists():
        return []
    reflections = _parse(path, read_json(path), shard=None)
    for start in range(0, len(reflections), SHARD_MAX_ENTRIES):
        chunk = reflections[start : start + SHARD_MAX_ENTRIES]
        name = _flat_shard_name(chunk)
        for reflection in chunk:
            reflection.archived_at = reflection.archived_at or reflection.created_at
            reflection.archive_shard_path = reflection.archive_shard_path or name
    return reflections


def write_flat_archive(character: Character, incoming: list[Reflection]) -> ImportResult:
    """Entries already in a shard (the original migrated them, or this import's reflection_archive/
    holds them) stay where they are."""
    ids = [r.reflection_id for r in incoming]
    sharded = set(
        Reflection.with_subjects.filter(
            character_id=character.pk, reflection_id__in=ids, archive_shard_path__isnull=False
        ).values_list("reflection_id", flat=True)
    )
    result = _upsert(character, [r for r in incoming if r.reflection_id not in sharded])
    return ImportResult(result.created, result.updated, result.unchanged + len(sharded))


def export_flat_archive(character: Character, path: Path) -> int | None:
    return None  # never written: its entries go out in reflection_archive/


# --- surfaced.json --------------------------------------------------------------------------------------


def surfaced_to_file_dict(entry: SurfacedReflection) -> dict[str, Any]:
    return {
        "reflection_id": entry.reflection_id,
        "text": entry.text,
        "surfaced_at": iso_local(entry.surfaced_at),
        "feedback": entry.feedback,
    }


def _surfaced_from_file_dict(entry: Any) -> SurfacedReflection:
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
        character_id=UNBOUND_CHARACTER,
        reflection_id=rid,
        text=text,
        surfaced_at=surfaced_at,
        feedback=feedback,
    )


def read_surfaced(path: Path) -> list[SurfacedReflection]:
    data = read_json(path)
    if not isinstance(data, list):
        raise MalformedFile(path, f"expected a JSON list, got {type(data).__name__}")
    incoming = []
    for index, entry in enumerate(data):
        try:
            incoming.append(_surfaced_from_file_dict(entry))
        except (ValueError, TypeError) as exc:
            raise MalformedFile(path, str(exc), entry=f"#{index}") from exc
    return incoming


def write_surfaced(character: Character, incoming: list[SurfacedReflection]) -> ImportResult:
    created = updated = unchanged = 0
    known = {(s.reflection_id, s.surfaced_at): s for s in surfaced_list(character_id=character.pk)}
    for row in incoming:
        current = known.get((row.reflection_id, row.surfaced_at))
        if current is None:
            row.character_id = character.pk
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


def export_surfaced(character: Character, path: Path) -> int | None:
    return write_records(path, [surfaced_to_file_dict(s) for s in surfaced_list(character_id=character.pk)])


# --- cursors.json (reference §2.12) ------------------------------------------------------------------------

REBUTTAL_CURSOR = "rebuttal_checked_until"
# Reserved and unused by the original; nekomem writes path A's extraction cursor under it, so an
# export carries how far extraction has read the raw log (``facts.services.extraction_coverage_set``).
EXTRACTION_CURSOR = "extracted_until"


def read_cursors(path: Path) -> dict[str, datetime | None]:
    data = read_json(path)
    if not isinstance(data, dict):
        raise MalformedFile(path, f"expected a JSON object of cursors, got {type(data).__name__}")
    cursors: dict[str, datetime | None] = {}
    for key, value in data.items():
        try:
            cursors[key] = parse_iso(value)
        except ValueError as exc:
            raise MalformedFile(path, str(exc), entry=key) from exc
    return cursors


def write_cursors(character: Character, cursors: dict[str, datetime | None]) -> ImportResult:
    created = updated = unchanged = 0
    if EXTRACTION_CURSOR in cursors:
        if extraction_coverage_set(character_id=character.pk, covered_until=cursors[EXTRACTION_CURSOR]):
            updated += 1
        else:
            unchanged += 1
    if REBUTTAL_CURSOR in cursors:
        until = cursors[REBUTTAL_CURSOR]
        cursor, was_created = ReflectionCursor.objects.get_or_create(
            character=character, defaults={"rebuttal_checked_until": until}
        )
        if was_created:
            created += 1
        elif cursor.rebuttal_checked_until == until:
            unchanged += 1
        else:
            ReflectionCursor.objects.filter(pk=cursor.pk).update(rebuttal_checked_until=until)
            updated += 1
    return ImportResult(created=created, updated=updated, unchanged=unchanged)


def export_cursors(character: Character, path: Path) -> int | None:
    cursors: dict[str, str | None] = {}
    cursor = ReflectionCursor.objects.filter(character=character).first()
    if cursor is not None and cursor.rebuttal_checked_until is not None:
        cursors[REBUTTAL_CURSOR] = iso_local(cursor.rebuttal_checked_until)
    extracted = extraction_cursor(character_id=character.pk)
    if extracted is not None and extracted.last_a_message_at is not None:
        cursors[EXTRACTION_CURSOR] = iso_local(extracted.last_a_message_at)
    if not cursors:
        return None
    write_json(path, cursors)
    return len(cursors)


register_file_handler(FileHandler("reflections.json", 40, read_reflections, _upsert, export_reflections))
register_file_handler(FileHandler(ARCHIVE_DIR, 41, read_archive, _upsert, export_archive))
register_file_handler(
    FileHandler(LEGACY_FLAT_ARCHIVE, 44, read_flat_archive, write_flat_archive, export_flat_archive)
)
register_file_handler(FileHandler("surfaced.json", 42, read_surfaced, write_surfaced, export_surfaced))
register_file_handler(FileHandler("cursors.json", 43, read_cursors, write_cursors, export_cursors))
