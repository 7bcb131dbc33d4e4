"""Import/export of the original per-character directory layout (``ROOT/<name>/…``).

The kernel knows no layer: each layer registers one ``FileHandler`` per file it owns, from its
AppConfig.ready() (``nekomem.portability.registry``), and ``memory_import`` / ``memory_export`` walk
the registry in ``order``. The
``import_memory`` / ``export_memory`` commands, the REST API and the memory browser all go through
these two functions (and their zip forms).

An import runs in two phases. First every file of every directory is read and validated (``read``,
no database), and any malformed file is reported by name; then, only if all of them are sound, every
``write`` runs in one transaction under the characters' locks. So a malformed file imports nothing at
all, and a sound directory imports everything. Importing the same directory twice changes nothing.
"""

from __future__ import annotations

import logging
import tempfile
import zipfile
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

from django.db import transaction

from nekomem.characters.locks import lock_character, settle_lock
from nekomem.characters.models import Character
from nekomem.characters.names import validate_character_name
from nekomem.characters.services import character_get_or_create, character_memory_changed
from nekomem.journal.causes import caused_by
from nekomem.portability.registry import (
    FileHandler,
    ImportRefused,
    ImportResult,
    MalformedFile,
    RootFileHandler,
    file_handlers,
    import_finishers,
    import_hooks,
    root_file_handlers,
)

logger = logging.getLogger(__name__)


# --- import --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportSource:
    """One directory in the original layout and the character it goes to."""

    name: str
    folder: Path
    # Only these files of the directory (the install's folder takes in just the files that changed).
    only: frozenset[str] | None = None


@dataclass(frozen=True)
class FileImported:
    filename: str
    result: ImportResult


@dataclass
class CharacterImported:
    name: str
    created: bool
    files: list[FileImported] = field(default_factory=list)

    @property
    def written(self) -> list[FileImported]:
        """The files that changed something (the only ones a report names)."""
        return [f for f in self.files if f.result.changed]


def directory_read(
    folder: Path, *, only: frozenset[str] | None = None
) -> tuple[list[tuple[FileHandler[Any], Any]], list[MalformedFile]]:
    """Every file of the layout found in ``folder`` (of ``only``, when given), parsed; and every
    malformed one."""
    parsed: list[tuple[FileHandler[Any], Any]] = []
    problems: list[MalformedFile] = []
    for handler in file_handlers():
        if only is not None and handler.filename not in only:
            continue
        path = folder / handler.filename
        if not path.exists():
            legacy = handler.legacy_path(folder)
            if legacy is None or not legacy.is_file():
                continue
            path = legacy
        try:
            parsed.append((handler, handler.read(path)))
        except MalformedFile as exc:
            problems.append(exc)
    return parsed, problems


@caused_by("import")
def memory_import(*, sources: Sequence[ImportSource]) -> list[CharacterImported]:
    """Import each directory into its character (created when new), all or nothing.

    Raises ``InvalidCharacterName`` for a bad target name and ``ImportRefused`` naming every malformed
    file; in both cases nothing was written.
    """
    for source in sources:
        validate_character_name(source.name)
    readings: list[tuple[ImportSource, list[tuple[FileHandler[Any], Any]]]] = []
    problems: list[str] = []
    for source in sources:
        if not source.folder.is_dir() and not legacy_files(source.folder):
            problems.append(f"{source.folder}: no such character directory")
            continue
        parsed, malformed = directory_read(source.folder, only=source.only)
        problems += [exc.describe(source.folder.parent) for exc in malformed]
        readings.append((source, parsed))
    if problems:
        raise ImportRefused(problems)

    existing = sorted(
        Character.objects.filter(name__in=[s.name for s in sources]).values_list("pk", flat=True)
    )
    reports: list[CharacterImported] = []
    changed: list[int] = []
    with ExitStack() as held:
        # The settle locks first, in id order (locks.py's order), so no turn lands half-way through.
        for character_id in existing:
            held.enter_context(settle_lock(character_id))
        with transaction.atomic():
            for source, parsed in readings:
                created = not Character.objects.filter(name=source.name).exists()
                character_id = character_get_or_create(name=source.name).pk
                report = CharacterImported(name=source.name, created=created)
                for handler, payload in parsed:
                    # Re-read under the lock for each file: an earlier file may change the character
                    # (nekomem_character.json sets the master's name, which tokenising depends on).
                    character = lock_character(character_id)
                    report.files.append(FileImported(handler.filename, handler.write(character, payload)))
                payloads = {handler.filename: payload for handler, payload in parsed}
                for name, finisher in import_finishers():
                    character = lock_character(character_id)
                    finished = finisher(character, payloads)
                    if finished.changed:
                        report.files.append(FileImported(name, finished))
                if report.written:
                    _log_changes(character_id=character_id, written=report.written)
                    changed.append(character_id)
                reports.append(report)
    for hook in import_hooks():
        try:
            hook(changed)
        except Exception:
            # The import is committed; what a hook prepares (a recall index) is built on demand anyway.
            logger.exception("after-import hook %s failed", getattr(hook, "__name__", hook))
    return reports


def legacy_files(folder: Path) -> list[Path]:
    """The files an older layout kept beside ``folder`` for its character (and that exist)."""
    paths = (handler.legacy_path(folder) for handler in file_handlers())
    return [path for path in paths if path is not None and path.is_file()]


def memory_sources(root: Path) -> list[ImportSource]:
    """Every character of a memory folder: its directories, and the names that have only legacy files
    beside them (an old install's ``recent_<name>.json``)."""
    names = {p.name for p in root.iterdir() if p.is_dir() and not _root_folder_only(p)}
    for handler in file_handlers():
        if handler.legacy_beside is None:
            continue
        prefix, suffix = handler.legacy_beside
        for path in root.glob(f"{prefix}*{suffix}"):
            name = path.name[len(prefix) : len(path.name) - len(suffix)]
            if name and path.is_file():
                names.add(name)
    return [ImportSource(name=name, folder=root / name) for name in sorted(names)]


def _root_folder_only(path: Path) -> bool:
    """A folder a root handler owns (``ROOT/knowledge/``) that holds no file of a character: not a
    character. (A character of that name still imports: its files are not the root handler's.)"""
    return path.name in {h.filename for h in root_file_handlers()} and not any(
        (path / h.filename).exists() for h in file_handlers()
    )


def _log_changes(*, character_id: int, written: list[FileImported]) -> None:
    """Log an import like any other change: the rows of each recall pool it wrote, so recall caches
    apply those; a file that cannot say what it wrote makes it one change without detail (a rebuild)."""
    if any(f.result.rows is None for f in written):
        character_memory_changed(character_id=character_id)
        return
    by_pool: dict[str, set[int]] = {}
    for imported in written:
        by_pool.setdefault(imported.result.pool, set()).update(imported.result.rows or ())
    for pool, rows in sorted(by_pool.items()):
        character_memory_changed(character_id=character_id, pool=pool, rows=rows)


# --- export --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileExported:
    filename: str
    entries: int


def memory_export(*, character: Character, folder: Path) -> list[FileExported]:
    """Write ``folder`` in the original layout; returns the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for handler in file_handlers():
        entries = handler.export(character, folder / handler.filename)
        if entries is not None:
            written.append(FileExported(handler.filename, entries))
    return written


# --- zip archives (the REST API and the memory browser) --------------------------------------------------

# What an uploaded archive may unpack to, whatever its headers claim.
ARCHIVE_MAX_UNPACKED_BYTES = 2 * 1024**3
_COPY_CHUNK = 1024 * 1024


def memory_export_archive(*, character: Character) -> IO[bytes]:
    """A zip of ``<name>/<file>…`` in the original layout (unzipped, a ROOT for ``import_memory``),
    as a temporary file positioned at its start."""
    archive = tempfile.TemporaryFile()  # noqa: SIM115  handed to the caller (a FileResponse closes it)
    with tempfile.TemporaryDirectory(prefix="nekomem-export-") as scratch:
        folder = Path(scratch) / character.name
        memory_export(character=character, folder=folder)
        with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
            for path in sorted(folder.rglob("*")):
                if path.is_file():
                    zipped.write(path, PurePosixPath(character.name, path.relative_to(folder).as_posix()))
    archive.seek(0)
    return archive


def memory_import_archive(*, name: str, archive: IO[bytes]) -> CharacterImported:
    """Import a zip made by ``memory_export_archive`` (or any zip of one original-layout directory, its
    files at the top or inside one folder) into the character ``name``. Raises like ``memory_import``."""
    validate_character_name(name)
    with tempfile.TemporaryDirectory(prefix="nekomem-import-") as scratch:
        folder = Path(scratch) / name
        _unpack(archive, folder)
        return memory_import(sources=[ImportSource(name=name, folder=folder)])[0]


def _layout_parts(member: str) -> tuple[str, ...] | None:
    """The member's path inside the character directory when it is a file of the layout, else None."""
    parts = PurePosixPath(member.replace("\\", "/")).parts
    if not parts or parts[0] == "/" or any(p in ("", ".", "..") for p in parts) or member.endswith("/"):
        return None
    known = {h.filename for h in file_handlers()}
    for start in (0, 1):  # files at the top, or inside the one folder the export writes
        inside = parts[start:]
        if len(inside) == 1 and inside[0] in known:
            return inside
        if len(inside) == 2 and inside[0] in known and inside[1].endswith(".json"):
            return inside  # a shard of an archive directory
    return None


def _unpack(archive: IO[bytes], folder: Path) -> None:
    try:
        zipped = zipfile.ZipFile(archive)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ImportRefused(["the upload is not a zip archive"]) from exc
    unpacked = 0
    found = 0
    with zipped:
        for info in zipped.infolist():
            parts = _layout_parts(info.filename)
            if parts is None:
                continue  # anything else in the archive (a README, __MACOSX/…) is not memory
            target = folder.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with zipped.open(info) as source, target.open("wb") as out:
                    while chunk := source.read(_COPY_CHUNK):
                        unpacked += len(chunk)
                        if unpacked > ARCHIVE_MAX_UNPACKED_BYTES:
                            raise ImportRefused(
                                [f"the archive unpacks to more than {ARCHIVE_MAX_UNPACKED_BYTES} bytes"]
                            )
                        out.write(chunk)
            except (zipfile.BadZipFile, OSError, EOFError, RuntimeError) as exc:
                raise ImportRefused([f"{'/'.join(parts)}: cannot be unpacked ({exc})"]) from exc
            found += 1
    if not found:
        raise ImportRefused(["the archive holds no file of the memory layout (facts.json, recent.json …)"])


def memory_export_root(*, root: Path) -> list[FileExported]:
    """Write the process-wide files at ``root``; returns the files written."""
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for handler in root_file_handlers():
        entries = handler.export(root / handler.filename)
        if entries is not None:
            written.append(FileExported(handler.filename, entries))
    return written


def memory_import_root(*, root: Path) -> list[FileImported]:
    """Import the process-wide files found at ``root``, all or nothing (``ImportRefused`` names each
    malformed file); importing the same files again changes nothing."""
    parsed: list[tuple[RootFileHandler[Any], Any]] = []
    problems: list[str] = []
    for handler in root_file_handlers():
        path = root / handler.filename
        if not path.exists():
            continue
        try:
            parsed.append((handler, handler.read(path)))
        except MalformedFile as exc:
            problems.append(exc.describe(root))
    if problems:
        raise ImportRefused(problems)
    with transaction.atomic():
        return [FileImported(handler.filename, handler.write(payload)) for handler, payload in parsed]
