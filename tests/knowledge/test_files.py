"""The knowledge folder's format, checked against a folder laid out as the original writes it."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from knowledge.files import (
    PACKS_DIR,
    REGISTRY_FILE,
    PackRecord,
    Registry,
    RegistryInvalid,
    SourceRecord,
    folder_read,
    folder_write,
    pack_file_name,
    parse_stamp,
    registry_dumps,
    registry_parse,
    utc_stamp,
)

FIXTURE = Path(__file__).parent / "fixtures" / "install" / "knowledge"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    copy = tmp_path / "knowledge"
    shutil.copytree(FIXTURE, copy)
    return copy


def test_the_fixture_is_laid_out_as_the_original_writes_it() -> None:
    registry = json.loads((FIXTURE / REGISTRY_FILE).read_text(encoding="utf-8"))
    assert registry["schema_version"] == 1
    assert list(registry["packs"]) == sorted(registry["packs"])
    for pack_id, record in registry["packs"].items():
        raw = (FIXTURE / PACKS_DIR / f"pack-{pack_id}.{record['pack_sha256'][:16]}.json").read_bytes()
        assert hashlib.sha256(raw).hexdigest() == record["pack_sha256"]
        payload = json.loads(raw)
        # Canonical: sorted keys, compact separators, UTF-8 unescaped, both term roles present.
        assert raw == json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()
        assert all(set(entry["terms"]) == {"alias", "recognition"} for entry in payload["entries"])


def test_a_folder_of_the_original_reads_field_by_field() -> None:
    reading = folder_read(FIXTURE)
    assert reading.broken == {}
    assert reading.registry is not None and reading.registry.enabled is True
    memes = reading.registry.packs["neko-memes"]
    assert memes.source == SourceRecord("猫娘梗百科", "https://example.org/memes", "CC BY-SA 4.0")
    assert (memes.declared_material_type, memes.material_type_override) == ("knowledge", None)
    assert (memes.entries, memes.chunks, memes.auto_context, memes.local_embedding) == (2, 2, False, True)
    styles = reading.registry.packs["greeting-styles"]
    assert (styles.material_type_override, styles.auto_context, styles.local_embedding) == (
        "knowledge",
        True,
        False,
    )
    assert styles.disabled_titles == ("morning greeting",)
    assert parse_stamp(styles.updated_at) is not None
    assert json.loads(reading.files["neko-memes"])["entries"][0]["terms"]["recognition"] == ["好草", "草了"]


def test_reading_and_writing_back_gives_the_same_bytes(tmp_path: Path) -> None:
    reading = folder_read(FIXTURE)
    assert reading.registry is not None
    out = tmp_path / "out"
    written = folder_write(out, reading.registry, reading.files)
    assert written.registry and len(written.pack_files) == 2
    for path in FIXTURE.rglob("*"):
        if path.is_file():
            assert (out / path.relative_to(FIXTURE)).read_bytes() == path.read_bytes(), path.name


def test_an_unchanged_folder_is_not_written_again(folder: Path) -> None:
    reading = folder_read(folder)
    assert reading.registry is not None
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}
    written = folder_write(folder, reading.registry, reading.files)
    assert (written.registry, written.pack_files, written.removed) == (False, [], [])
    assert {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()} == before


def test_a_new_version_replaces_the_old_file_and_the_record(folder: Path) -> None:
    reading = folder_read(folder)
    assert reading.registry is not None
    old = reading.registry.packs["neko-memes"]
    payload = json.loads(reading.files["neko-memes"])
    payload["entries"] = payload["entries"][:1]
    raw = json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()
    sha = hashlib.sha256(raw).hexdigest()
    new = PackRecord(**{**old.__dict__, "pack_sha256": sha, "entries": 1, "chunks": 1})
    registry = Registry(enabled=False, packs={**reading.registry.packs, "neko-memes": new})
    written = folder_write(folder, registry, {"neko-memes": raw})
    assert written.pack_files == [pack_file_name("neko-memes", sha)]
    assert written.removed == [old.file_name]
    again = folder_read(folder)
    assert again.registry == registry and again.broken == {}
    assert sorted(p.name for p in (folder / PACKS_DIR).iterdir()) == sorted(
        [new.file_name, reading.registry.packs["greeting-styles"].file_name]
    )


def test_a_corrupt_pack_file_breaks_that_pack_only(folder: Path) -> None:
    registry = folder_read(folder).registry
    assert registry is not None
    (folder / PACKS_DIR / registry.packs["neko-memes"].file_name).write_text("{not json", encoding="utf-8")
    (folder / PACKS_DIR / registry.packs["greeting-styles"].file_name).unlink()
    reading = folder_read(folder)
    assert reading.broken == {"neko-memes": "pack_file_mismatch", "greeting-styles": "pack_file_missing"}
    assert reading.files == {} and reading.registry == registry


def test_one_sound_pack_survives_a_broken_neighbour(folder: Path) -> None:
    registry = folder_read(folder).registry
    assert registry is not None
    (folder / PACKS_DIR / registry.packs["greeting-styles"].file_name).write_bytes(b"x" * 10)
    reading = folder_read(folder)
    assert list(reading.files) == ["neko-memes"] and list(reading.broken) == ["greeting-styles"]


def test_a_broken_pack_keeps_its_record_and_file_when_written_back(folder: Path) -> None:
    registry = folder_read(folder).registry
    assert registry is not None
    damaged = folder / PACKS_DIR / registry.packs["greeting-styles"].file_name
    damaged.write_bytes(b"damaged")
    folder_write(folder, registry, {})
    assert damaged.read_bytes() == b"damaged"
    assert folder_read(folder).registry == registry


def test_a_folder_without_a_registry_is_an_empty_store(tmp_path: Path) -> None:
    reading = folder_read(tmp_path)
    assert (reading.registry, reading.files, reading.broken) == (None, {}, {})


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("{half", "invalid_json"),
        ('{"schema_version": 2, "packs": {}}', "unsupported_schema_version"),
        ('{"schema_version": 1, "packs": []}', "invalid_packs"),
        ('{"schema_version": 1, "enabled": "yes", "packs": {}}', "invalid_field"),
        ('{"schema_version": 1, "packs": {"Bad Id": {}}}', "invalid_pack_record"),
    ],
)
def test_a_registry_that_cannot_be_trusted_is_refused(tmp_path: Path, text: str, reason: str) -> None:
    (tmp_path / REGISTRY_FILE).write_text(text, encoding="utf-8")
    with pytest.raises(RegistryInvalid) as refused:
        folder_read(tmp_path)
    assert refused.value.reason == reason


def test_bytes_that_are_not_the_recorded_version_are_refused(tmp_path: Path) -> None:
    registry = folder_read(FIXTURE).registry
    assert registry is not None
    with pytest.raises(ValueError, match="neko-memes"):
        folder_write(tmp_path, registry, {"neko-memes": b"{}"})
    assert not (tmp_path / REGISTRY_FILE).exists()


def test_registry_text_and_times_match_the_originals() -> None:
    registry = registry_parse(json.loads((FIXTURE / REGISTRY_FILE).read_text(encoding="utf-8")))
    assert registry_dumps(registry) == (FIXTURE / REGISTRY_FILE).read_text(encoding="utf-8")
    moment = parse_stamp("2026-11-20T08:15:02.412733Z")
    assert moment is not None and utc_stamp(moment) == "2026-11-20T08:15:02.412733Z"
    assert parse_stamp("") is None and parse_stamp("yesterday") is None
