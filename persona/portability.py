"""``persona.json``, ``persona_corrections.json``, ``persona_archive/`` and ``settings.json`` for the
import/export commands (reference §2.8, §2.10–2.11).

Entries keep exactly what the files hold: raw reinforcement and disputation, protection, mentions and
suppression, version history, the token cache, and unknown keys; sections keep their key order and
entries their file order. Importing the same directory twice changes nothing.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from django.db.models import Count
from django.utils import timezone

from nekomem.characters.models import Character
from nekomem.portability import (
    UNBOUND_CHARACTER,
    FileHandler,
    ImportResult,
    MalformedFile,
    read_json,
    register_file_handler,
    register_import_finisher,
    rows_upsert,
    write_json,
    write_records,
)
from nekomem.subjects import subject_key_from_extra, subject_key_from_section
from persona.card import card_sha
from persona.models import (
    CORRECTION_POOL,
    PersonaArchiveShard,
    PersonaCorrection,
    PersonaEntry,
    PersonaSection,
    PersonaState,
)
from persona.selectors import persona_corrections_list, persona_file_view, persona_in_shards, persona_state
from persona.services.entries import correction_key
from persona.services.records import (
    META_SECTION,
    MODEL_FIELDS,
    entry_from_file_dict,
    entry_to_file_dict,
    iso_local,
    parse_iso,
)
from reflections.services import reflections_evidence_seed

ARCHIVE_DIR = "persona_archive"
# v1 layout → current sections (§2.10).
_V1_SECTIONS = {"user": "master", "ai": "neko"}


def _v1_migrated(data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        key = _V1_SECTIONS.get(key, key)
        if isinstance(value, dict) and "dynamics" in value and "facts" not in value:
            value = {**{k: v for k, v in value.items() if k != "dynamics"}, "facts": value["dynamics"]}
        out[key] = value
    return out


def _parse_persona(path: Path, data: Any) -> tuple[list[PersonaSection], list[PersonaEntry]]:
    if not isinstance(data, dict):
        raise MalformedFile(path, f"expected a JSON object of sections, got {type(data).__name__}")
    sections: list[PersonaSection] = []
    entries: list[PersonaEntry] = []
    for position, (key, body) in enumerate(_v1_migrated(data).items()):
        if not isinstance(body, dict):
            raise MalformedFile(path, f"section {key!r} must be an object")
        facts = body.get("facts", [])
        if not isinstance(facts, list):
            raise MalformedFile(path, f"section {key!r}: 'facts' must be a list")
        if key == META_SECTION:
            # Migration markers, kept verbatim (they are not memories).
            sections.append(
                PersonaSection(character_id=UNBOUND_CHARACTER, key=key, position=position, extra=body)
            )
            continue
        extra = {k: v for k, v in body.items() if k != "facts"}
        sections.append(
            PersonaSection(
                character_id=UNBOUND_CHARACTER,
                key=key,
                position=position,
                extra=extra,
                subject_key=subject_key_from_section(key),
            )
        )
        for index, raw in enumerate(facts):
            try:
                entries.append(
                    entry_from_file_dict(raw, character_id=UNBOUND_CHARACTER, section=key, position=index)
                )
            except (ValueError, TypeError) as exc:
                label = raw.get("id") if isinstance(raw, dict) else None
                raise MalformedFile(
                    path, str(exc), entry=f"{key} #{index}" + (f" ({label})" if label else "")
                ) from exc
    return sections, entries


def _upsert_entries(character: Character, incoming: list[PersonaEntry]) -> ImportResult:
    return rows_upsert(
        PersonaEntry, character=character, incoming=incoming, key="entry_id", fields=MODEL_FIELDS
    )


def _mark_card_current(character: Character) -> None:
    """An imported directory's card entries stand until the character's card itself changes."""
    state, _ = PersonaState.objects.get_or_create(character=character)
    if not character.card:
        state.card_sha256 = card_sha(character.card)
        state.save(update_fields=["card_sha256"])


def read_persona(path: Path) -> tuple[list[PersonaSection], list[PersonaEntry]]:
    return _parse_persona(path, read_json(path))


def write_persona(
    character: Character, parsed: tuple[list[PersonaSection], list[PersonaEntry]]
) -> ImportResult:
    sections, entries = parsed
    # Sections count as rows too: their order and a scoped section's display name are in the file.
    written = _upsert_entries(character, entries)
    created, updated, unchanged = written.created, written.updated, written.unchanged
    for section in sections:
        current = PersonaSection.with_subjects.filter(character_id=character.pk, key=section.key).first()
        if current is None:
            section.character_id = character.pk
            section.save()
            created += 1
        elif (current.position, current.extra) != (section.position, section.extra):
            current.position, current.extra = section.position, section.extra
            current.save(update_fields=["position", "extra"])
            updated += 1
        else:
            unchanged += 1
    _mark_card_current(character)
    return ImportResult(created=created, updated=updated, unchanged=unchanged)


def export_persona(character: Character, path: Path) -> int | None:
    view = persona_file_view(character_id=character.pk, with_subjects=True)
    count = sum(len(body.get("facts") or []) for key, body in view.items() if key != META_SECTION)
    if not count and not path.exists():
        return None
    write_json(path, view)
    return count


# --- persona_archive/ --------------------------------------------------------------------------------------


def read_archive(folder: Path) -> list[PersonaEntry]:
    if not folder.is_dir():
        raise MalformedFile(folder, "expected a directory of shard files")
    incoming: list[PersonaEntry] = []
    for shard_path in sorted(folder.glob("*.json")):
        data = read_json(shard_path)
        if not isinstance(data, list):
            raise MalformedFile(shard_path, "expected a JSON list of entries")
        for index, raw in enumerate(data):
            section = raw.get("entity") if isinstance(raw, dict) else None
            try:
                entry = entry_from_file_dict(
                    raw, character_id=UNBOUND_CHARACTER, section=str(section or "master"), position=index
                )
            except (ValueError, TypeError) as exc:
                raise MalformedFile(shard_path, str(exc), entry=f"#{index}") from exc
            entry.archive_shard_path = entry.archive_shard_path or shard_path.name
            incoming.append(entry)
    return incoming


def write_archive(character: Character, incoming: list[PersonaEntry]) -> ImportResult:
    result = _upsert_entries(character, incoming)
    _shards_recount(character_id=character.pk)
    return result


def _shard_date(name: str) -> datetime:
    try:
        return parse_iso(name[:10] + "T00:00:00") or timezone.now()
    except ValueError:
        return timezone.now()


def _shards_recount(*, character_id: int) -> None:
    sizes = (
        PersonaEntry.with_subjects.filter(character_id=character_id, archive_shard_path__isnull=False)
        .values_list("archive_shard_path")
        .annotate(n=Count("pk"))
        .values_list("archive_shard_path", "n")
    )
    for path, n in sizes:
        name = Path(path or "").name
        shard, made = PersonaArchiveShard.objects.get_or_create(
            character_id=character_id, name=name, defaults={"created_at": _shard_date(name), "size": n}
        )
        if not made and shard.size != n:
            PersonaArchiveShard.objects.filter(pk=shard.pk).update(size=n)


def export_archive(character: Character, folder: Path) -> int | None:
    shards = persona_in_shards(character_id=character.pk)
    if not shards:
        return None
    written = 0
    for path, entries in shards.items():
        records = []
        for entry in entries:
            record = entry_to_file_dict(entry)
            record.setdefault("entity", entry.section)
            records.append(record)
        write_json(folder / Path(path).name, records)
        written += len(entries)
    return written


# --- persona_corrections.json ------------------------------------------------------------------------------

_CORRECTION_KEYS = ("old_text", "new_text", "entity", "created_at", "resolve_attempts")


def correction_to_file_dict(correction: PersonaCorrection) -> dict[str, Any]:
    record: dict[str, Any] = {
        "old_text": correction.old_text,
        "new_text": correction.new_text,
        "entity": correction.entity,
        "created_at": iso_local(correction.created_at),
    }
    if correction.resolve_attempts or "resolve_attempts" in correction.extra:
        record["resolve_attempts"] = correction.resolve_attempts
    for key, value in correction.extra.items():
        record.setdefault(key, value)
    return record


def _correction_from_file_dict(raw: Any) -> PersonaCorrection:
    if not isinstance(raw, dict):
        raise ValueError(f"expected an object, got {type(raw).__name__}")
    for key in ("old_text", "new_text", "entity"):
        if not isinstance(raw.get(key), str):
            raise ValueError(f"missing or non-string {key!r}")
    attempts = raw.get("resolve_attempts", 0)
    if isinstance(attempts, bool) or not isinstance(attempts, int):
        raise ValueError("'resolve_attempts' must be an integer")
    extra = {k: v for k, v in raw.items() if k not in _CORRECTION_KEYS}
    if "resolve_attempts" in raw and attempts == 0:
        extra["resolve_attempts"] = 0  # spelled out in the file: written back the same way
    created_at = parse_iso(raw.get("created_at")) or timezone.now()
    return PersonaCorrection(
        character_id=UNBOUND_CHARACTER,
        old_text=raw["old_text"],
        new_text=raw["new_text"],
        entity=raw["entity"],
        created_at=created_at,
        resolve_attempts=attempts,
        dedup_key=correction_key(raw["old_text"], raw["new_text"], raw["entity"], extra),
        extra=extra,
        subject_key=subject_key_from_extra(extra),
    )


def read_corrections(path: Path) -> list[PersonaCorrection]:
    data = read_json(path)
    if not isinstance(data, list):
        raise MalformedFile(path, f"expected a JSON list, got {type(data).__name__}")
    incoming = []
    for index, raw in enumerate(data):
        try:
            incoming.append(_correction_from_file_dict(raw))
        except (ValueError, TypeError) as exc:
            raise MalformedFile(path, str(exc), entry=f"#{index}") from exc
    return incoming


def write_corrections(character: Character, incoming: list[PersonaCorrection]) -> ImportResult:
    created = unchanged = updated = 0
    written: set[int] = set()
    # A pair the resolver dropped is known too: the file cannot bring it back a second time.
    known = {
        c.dedup_key: c
        for c in persona_corrections_list(character_id=character.pk, dropped_too=True, with_subjects=True)
    }
    for row in incoming:
        current = known.get(row.dedup_key)
        if current is None:
            row.character_id = character.pk
            row.save()
            known[row.dedup_key] = row
            written.add(row.pk)
            created += 1
        elif current.resolve_attempts == row.resolve_attempts and current.extra == row.extra:
            unchanged += 1
        else:
            current.resolve_attempts, current.extra = row.resolve_attempts, row.extra
            current.save(update_fields=["resolve_attempts", "extra"])
            written.add(current.pk)
            updated += 1
    # Versioned like every write of a pair (the history's layer ``persona_corrections``).
    return ImportResult(
        created=created,
        updated=updated,
        unchanged=unchanged,
        pool=CORRECTION_POOL,
        rows=frozenset(written),
    )


def export_corrections(character: Character, path: Path) -> int | None:
    return write_records(
        path,
        [
            correction_to_file_dict(c)
            for c in persona_corrections_list(character_id=character.pk, with_subjects=True)
        ],
    )


# --- settings.json (legacy) --------------------------------------------------------------------------------


def read_settings(path: Path) -> dict[str, Any]:
    data = read_json(path)
    if not isinstance(data, dict):
        raise MalformedFile(path, f"expected a JSON object, got {type(data).__name__}")
    return data


def write_settings(character: Character, data: dict[str, Any]) -> ImportResult:
    state, created = PersonaState.objects.get_or_create(character=character)
    if state.legacy_settings == data:
        return ImportResult(unchanged=1)
    state.legacy_settings = data
    # A directory that already has a persona was migrated by the original (ensure_persona).
    state.legacy_migrated = state.legacy_migrated or PersonaEntry.objects.filter(character=character).exists()
    state.save(update_fields=["legacy_settings", "legacy_migrated"])
    return ImportResult(created=1 if created else 0, updated=0 if created else 1)


def export_settings(character: Character, path: Path) -> int | None:
    state = persona_state(character_id=character.pk)
    if state is None or state.legacy_settings is None:
        return None
    write_json(path, state.legacy_settings)
    return 1


register_file_handler(FileHandler("persona.json", 50, read_persona, write_persona, export_persona))
register_file_handler(FileHandler(ARCHIVE_DIR, 51, read_archive, write_archive, export_archive))
register_file_handler(
    FileHandler("persona_corrections.json", 52, read_corrections, write_corrections, export_corrections)
)
register_file_handler(FileHandler("settings.json", 53, read_settings, write_settings, export_settings))


# --- the one-shot evidence seeding of an old install (§2.10 ``__meta__``, §3.8 step 4) ------------------

EVIDENCE_MIGRATION_MARKER = "__evidence_migration_v1__"
MIGRATION_SEED_SOURCE = "migration_seed"
SEEDED_FILES = ("reflections.json", "persona.json")


def _has_marker(section: PersonaSection | None) -> bool:
    facts = (section.extra or {}).get("facts") if section is not None else None
    return isinstance(facts, list) and any(
        isinstance(e, dict) and e.get("id") == EVIDENCE_MIGRATION_MARKER for e in facts
    )


def evidence_seed_once(character: Character, payloads: dict[str, Any]) -> ImportResult:
    """After an import of files from before the evidence fields: seed them once, as the original does at
    start, and leave its marker in ``__meta__`` (imported with persona.json when the original already
    seeded; then nothing happens). Persona entries need no seed: their zero defaults are the seed."""
    if not any(name in payloads for name in SEEDED_FILES):
        return ImportResult()
    section = PersonaSection.objects.filter(character_id=character.pk, key=META_SECTION).first()
    if _has_marker(section):
        return ImportResult()
    now = timezone.now()
    seeded = reflections_evidence_seed(character_id=character.pk, now=now)
    marker = {
        "id": EVIDENCE_MIGRATION_MARKER,
        "text": "",
        "source": MIGRATION_SEED_SOURCE,
        "source_id": None,
        "protected": True,
        "migrated_at": iso_local(now),
    }
    if section is None:
        last = PersonaSection.objects.filter(character_id=character.pk).order_by("-position").first()
        PersonaSection.objects.create(
            character_id=character.pk,
            key=META_SECTION,
            position=last.position + 1 if last else 0,
            extra={"facts": [marker]},
        )
    else:
        facts = (section.extra or {}).get("facts")
        section.extra = {
            **(section.extra or {}),
            "facts": [*(facts if isinstance(facts, list) else []), marker],
        }
        section.save(update_fields=["extra"])
    return ImportResult(created=1, updated=seeded)


register_import_finisher("persona.evidence_seed", evidence_seed_once)
