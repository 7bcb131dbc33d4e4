"""The knowledge store's folder in the original's layout (reference §1.8, §12).

``<folder>/registry.json`` holds the user's state of every installed pack and the global switch;
``<folder>/packs/pack-<id>.<sha16>.json`` holds each pack in canonical form, named by the first 16 hex
digits of the sha256 of its bytes. The original rebuilds its ``knowledge.db`` from these two and
nothing else, so what is written here is all it needs to serve the same packs, and what it writes is
all nekomem needs. Pure format: no database.

Faults as the original treats them: a missing ``registry.json`` is an empty store; one that does not
parse is not trusted and never written over (``RegistryInvalid``); a pack file that is missing,
altered or too large marks that one pack broken and leaves the others alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from knowledge.packs import MATERIAL_TYPES, MAX_PACK_BYTES, pack_id_is_valid, pack_sha256

REGISTRY_FILE = "registry.json"
PACKS_DIR = "packs"
REGISTRY_SCHEMA_VERSION = 1
# The original refuses a registry past this (the largest its capacity limits allow) rather than
# loading it whole, and a pack file past the pack limit fails its hash check unread.
MAX_REGISTRY_BYTES = 128 * 1024 * 1024
SHA_PREFIX_CHARS = 16

_SHA256 = re.compile(r"[0-9a-f]{64}")
_PACK_FILE = re.compile(r"pack-(?P<pack_id>[a-z0-9][a-z0-9._-]{1,63})\.(?P<sha>[0-9a-f]{16})\.json")


class RegistryInvalid(Exception):
    """``registry.json`` exists but cannot be trusted: nothing is taken from it or written over it."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PackFileBroken(Exception):
    """A pack's file is missing, unreadable or not the bytes its record names: that pack is broken."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def pack_file_name(pack_id: str, sha256: str) -> str:
    """The file a pack version lives in (prefixed, so an id like ``con`` never names a device)."""
    return f"pack-{pack_id}.{sha256[:SHA_PREFIX_CHARS]}.json"


def utc_stamp(moment: datetime) -> str:
    """A time as the original writes it: ISO-8601 in UTC with a ``Z``."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def parse_stamp(value: str) -> datetime | None:
    """A registry time back into an aware datetime; None when empty or not a time."""
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class SourceRecord:
    name: str
    homepage: str = ""
    license: str = ""


@dataclass(frozen=True)
class PackRecord:
    """One pack's line of ``registry.json``: what was installed and the user's state for it."""

    pack_id: str
    pack_sha256: str
    source: SourceRecord
    declared_material_type: str
    entries: int
    chunks: int
    material_type_override: str | None = None
    auto_context: bool = False
    local_embedding: bool = True
    disabled_titles: tuple[str, ...] = ()  # title keys (NFKC, whitespace collapsed, casefolded)
    installed_at: str = ""
    updated_at: str = ""

    @property
    def file_name(self) -> str:
        return pack_file_name(self.pack_id, self.pack_sha256)

    def to_json(self) -> dict[str, Any]:
        # The original's key order, so a diff of the file shows only what changed.
        return {
            "pack_sha256": self.pack_sha256,
            "source": {
                "name": self.source.name,
                "homepage": self.source.homepage,
                "license": self.source.license,
            },
            "declared_material_type": self.declared_material_type,
            "material_type_override": self.material_type_override,
            "entries": self.entries,
            "chunks": self.chunks,
            "auto_context": self.auto_context,
            "local_embedding": self.local_embedding,
            "disabled_titles": sorted(set(self.disabled_titles)),
            "installed_at": self.installed_at,
            "updated_at": self.updated_at,
        }


@dataclass(frozen=True)
class Registry:
    enabled: bool = True
    packs: Mapping[str, PackRecord] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "schema_version": REGISTRY_SCHEMA_VERSION,
            "enabled": self.enabled,
            "packs": {pack_id: record.to_json() for pack_id, record in sorted(self.packs.items())},
        }


def registry_dumps(registry: Registry) -> str:
    """The file's text, as the original writes it (two-space indent, UTF-8 text unescaped)."""
    return json.dumps(registry.to_json(), ensure_ascii=False, indent=2)


# --- reading ---------------------------------------------------------------------------------------------


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise RegistryInvalid("invalid_field")
    return value


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise RegistryInvalid("invalid_field")
    return value


def _count(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise RegistryInvalid("invalid_field")
    return value


def _record_parse(pack_id: str, raw: object) -> PackRecord:
    if not pack_id_is_valid(pack_id) or not isinstance(raw, dict):
        raise RegistryInvalid("invalid_pack_record")
    sha = raw.get("pack_sha256")
    if not isinstance(sha, str) or not _SHA256.fullmatch(sha):
        raise RegistryInvalid("invalid_pack_record")
    source = raw.get("source")
    declared = raw.get("declared_material_type")
    override = raw.get("material_type_override")
    disabled = raw.get("disabled_titles")
    if (
        not isinstance(source, dict)
        or declared not in MATERIAL_TYPES
        or (override is not None and override not in MATERIAL_TYPES)
        or not isinstance(disabled, list)
        or not all(isinstance(title, str) for title in disabled)
    ):
        raise RegistryInvalid("invalid_pack_record")
    return PackRecord(
        pack_id=pack_id,
        pack_sha256=sha,
        source=SourceRecord(
            name=_text(source.get("name", "")),
            homepage=_text(source.get("homepage", "")),
            license=_text(source.get("license", "")),
        ),
        declared_material_type=str(declared),
        material_type_override=override,
        entries=_count(raw.get("entries")),
        chunks=_count(raw.get("chunks")),
        auto_context=_flag(raw.get("auto_context")),
        local_embedding=_flag(raw.get("local_embedding")),
        disabled_titles=tuple(sorted(set(disabled))),
        installed_at=_text(raw.get("installed_at", "")),
        updated_at=_text(raw.get("updated_at", "")),
    )


def registry_parse(payload: object) -> Registry:
    """A decoded ``registry.json``, checked as strictly as the original checks it."""
    if not isinstance(payload, dict) or payload.get("schema_version") != REGISTRY_SCHEMA_VERSION:
        raise RegistryInvalid("unsupported_schema_version")
    packs = payload.get("packs")
    if not isinstance(packs, dict):
        raise RegistryInvalid("invalid_packs")
    return Registry(
        enabled=_flag(payload.get("enabled", True)),
        packs={pack_id: _record_parse(pack_id, raw) for pack_id, raw in packs.items()},
    )


def registry_read(folder: Path) -> Registry | None:
    """The folder's registry; None when it has none (an empty store). ``RegistryInvalid`` otherwise."""
    path = folder / REGISTRY_FILE
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_REGISTRY_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise RegistryInvalid(type(exc).__name__) from exc
    if len(raw) > MAX_REGISTRY_BYTES:
        raise RegistryInvalid("registry_too_large")
    try:
        payload = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RegistryInvalid("invalid_json") from exc
    return registry_parse(payload)


def pack_file_read(folder: Path, record: PackRecord) -> bytes:
    """The bytes of a pack's file, checked against its record's sha256 (``PackFileBroken``)."""
    try:
        with (folder / PACKS_DIR / record.file_name).open("rb") as handle:
            raw = handle.read(MAX_PACK_BYTES + 1)
    except FileNotFoundError as exc:
        raise PackFileBroken("pack_file_missing") from exc
    except OSError as exc:
        raise PackFileBroken("pack_file_unreadable") from exc
    if pack_sha256(raw) != record.pack_sha256:
        raise PackFileBroken("pack_file_mismatch")
    return raw


@dataclass(frozen=True)
class FolderReading:
    """What a knowledge folder holds: ``registry`` None when it has no ``registry.json``; the bytes
    of every sound pack file; why each other pack is broken."""

    registry: Registry | None
    files: dict[str, bytes]
    broken: dict[str, str]


def folder_read(folder: Path) -> FolderReading:
    """Read a whole knowledge folder; ``RegistryInvalid`` when its registry cannot be trusted."""
    registry = registry_read(folder)
    files: dict[str, bytes] = {}
    broken: dict[str, str] = {}
    for pack_id, record in registry.packs.items() if registry is not None else ():
        try:
            files[pack_id] = pack_file_read(folder, record)
        except PackFileBroken as exc:
            broken[pack_id] = exc.reason
    return FolderReading(registry=registry, files=files, broken=broken)


# --- writing ---------------------------------------------------------------------------------------------


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """A temp file beside ``path``, then a rename: a reader sees the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


# (path, size, mtime) → sha256 of files this process hashed: a write after a toggle does not hash
# every installed pack again.
_hashed: dict[tuple[str, int, int], str] = {}


def _holds(path: Path, sha256: str) -> bool:
    try:
        stat = path.stat()
        if stat.st_size > MAX_PACK_BYTES:
            return False
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        if key not in _hashed:
            _hashed[key] = pack_sha256(path.read_bytes())
        return _hashed[key] == sha256
    except OSError:
        return False


@dataclass(frozen=True)
class FolderWritten:
    pack_files: list[str]  # written now
    removed: list[str]  # files no record names any more
    registry: bool  # registry.json was written (it differed)


def folder_write(folder: Path, registry: Registry, files: Mapping[str, bytes]) -> FolderWritten:
    """Bring ``folder`` to ``registry``: each pack's file first (only when it is not already there,
    byte for byte), then ``registry.json`` (only when its text changed), then the files no record
    names any more. So a reader never finds a record whose file is not there yet. ``files`` holds
    the bytes of the packs to write; a record without bytes (a broken pack) keeps whatever file it
    has."""
    packs = folder / PACKS_DIR
    packs.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    for pack_id, record in sorted(registry.packs.items()):
        path = packs / record.file_name
        # Looked up only when the file is not there: ``files`` may load each pack's bytes on demand.
        if pack_id not in files or _holds(path, record.pack_sha256):
            continue
        raw = files[pack_id]
        if pack_sha256(raw) != record.pack_sha256:
            raise ValueError(f"the bytes given for pack {pack_id} are not the version its record names")
        write_bytes_atomic(path, raw)
        written.append(record.file_name)
    text = registry_dumps(registry)
    registry_path = folder / REGISTRY_FILE
    try:
        current = registry_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        current = None
    if current != text:
        write_bytes_atomic(registry_path, text.encode("utf-8"))
    referenced = {record.file_name for record in registry.packs.values()}
    removed: list[str] = []
    for path in sorted(packs.iterdir()):
        stale_temp = path.name.startswith(".") and path.name.endswith(".tmp")
        if path.is_file() and (
            stale_temp or (_PACK_FILE.fullmatch(path.name) and path.name not in referenced)
        ):
            with contextlib.suppress(OSError):  # retried at the next write
                path.unlink()
                removed.append(path.name)
    return FolderWritten(pack_files=written, removed=removed, registry=current != text)
