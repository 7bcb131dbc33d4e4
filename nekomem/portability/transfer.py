"""Import/export of the original per-character directory layout (``ROOT/<name>/…``).

The kernel knows no layer: each layer registers one ``FileHandler`` per file it owns, from its
AppConfig.ready(), and ``memory_import`` / ``memory_export`` walk the registry in ``order``. The
``import_memory`` / ``export_memory`` commands, the REST API and the memory browser all go through
these two functions (and their zip forms).

An import runs in two phases. First every file of every directory is read and validated (``read``,
no database), and any malformed file is reported by name; then, only if all of them are sound, every
``write`` runs in one transaction under the characters' locks. So a malformed file imports nothing at
all, and a sound directory imports everything. Importing the same directory twice changes nothing.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import IO, Any, Generic, TypeVar

from django.db import models, transaction

from nekomem.characters.locks import lock_character, settle_lock
from nekomem.characters.models import Character
from nekomem.characters.names import validate_character_name
from nekomem.characters.services import character_get_or_create, character_memory_changed
from nekomem.journal.causes import caused_by
from nekomem.timestamps import iso_local, parse_iso  # noqa: F401  the file handlers use them from here

logger = logging.getLogger(__name__)
T = TypeVar("T")
Parsed = TypeVar("Parsed")
Row = TypeVar("Row", bound=models.Model)

# Rows are parsed before their character exists (a first import creates it inside the write
# transaction); a handler's ``write`` binds them to the real character.
UNBOUND_CHARACTER = 0


class MalformedFile(Exception):
    """A file (or one entry of it) cannot be imported; nothing is imported when one is found."""

    def __init__(self, path: Path | str, message: str, *, entry: int | str | None = None) -> None:
        self.path = str(path)
        self.entry = entry
        self.reason = message
        super().__init__(self.describe())

    def describe(self, relative_to: Path | None = None) -> str:
        """``<file>[, entry <e>]: <reason>``, the file named relative to ``relative_to`` when it is inside."""
        shown = self.path
        if relative_to is not None and Path(self.path).is_relative_to(relative_to):
            shown = Path(self.path).relative_to(relative_to).as_posix()
        where = shown if self.entry is None else f"{shown}, entry {self.entry}"
        return f"{where}: {self.reason}"


class ImportRefused(Exception):
    """Nothing was imported: ``problems`` names each malformed file (and entry) found."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class ImportResult:
    """What one file's write did. ``pool`` and ``rows``: the recall pool (as the memory-change log
    names it) and the primary keys of its rows the write added or changed, so recall caches apply
    just those; ``rows`` None means the write cannot say, and readers rebuild."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    pool: str = ""
    rows: frozenset[int] | None = None

    @property
    def changed(self) -> bool:
        return bool(self.created or self.updated)


@dataclass(frozen=True)
class FileHandler(Generic[Parsed]):
    """How one file (or shard directory) of the layout is read, written to the database, and exported.

    ``read(path)`` runs only when the path exists; it parses and validates the whole file without
    touching the database and raises ``MalformedFile`` naming the file and entry. ``write(character,
    parsed)`` runs inside the import's transaction with the character locked. ``export(character,
    path)`` writes the file and returns how many entries it holds, or None when it wrote nothing (the
    layer holds nothing for this file and no earlier export is there to overwrite).

    Two optional parts serve the install's live file views (``nekomem/install``): ``stamp(character)``
    is a cheap value that changes whenever the export would (so a large file is not exported again
    to find that nothing changed); ``append(character, path)`` brings an existing file up to date in
    place and returns the entries it added, or None when it cannot (the file is then exported whole).
    """

    filename: str
    order: int
    read: Callable[[Path], Parsed]
    write: Callable[[Character, Parsed], ImportResult]
    export: Callable[[Character, Path], int | None]
    # An older layout kept the file beside the character directories as ``<prefix><name><suffix>``
    # (``memory/recent_<name>.json``): read there when the directory has no such file. Never written.
    legacy_beside: tuple[str, str] | None = None

    stamp: Callable[[Character], object] | None = None
    append: Callable[[Character, Path], int | None] | None = None

    def legacy_path(self, folder: Path) -> Path | None:
        if self.legacy_beside is None:
            return None
        prefix, suffix = self.legacy_beside
        return folder.parent / f"{prefix}{folder.name}{suffix}"


_handlers: dict[str, FileHandler[Any]] = {}

# Run for each imported character after its files, inside the import's transaction with the character
# locked: one-shot migrations the original runs on the files it finds (evidence seeding, say). Given the
# parsed payloads by file name.
ImportFinisher = Callable[[Character, dict[str, Any]], ImportResult]
_finishers: dict[str, ImportFinisher] = {}


def register_import_finisher(name: str, finisher: ImportFinisher) -> None:
    _finishers[name] = finisher


def register_file_handler(handler: FileHandler[Any]) -> None:
    _handlers[handler.filename] = handler


def file_handlers() -> list[FileHandler[Any]]:
    return sorted(_handlers.values(), key=lambda h: (h.order, h.filename))


# --- progress bars -----------------------------------------------------------------------------------

_progress_shown: ContextVar[bool] = ContextVar("nekomem_portability_progress", default=False)
PROGRESS_MIN_ITEMS = 1000


@contextmanager
def progress_bars() -> Iterator[None]:
    """Within the block, long loops show a tqdm bar on stderr when it is a terminal (the commands)."""
    token = _progress_shown.set(True)
    try:
        yield
    finally:
        _progress_shown.reset(token)


def progress(items: Iterable[T], *, total: int | None = None, desc: str = "") -> Iterator[T]:
    """A tqdm bar on long runs of a command at an interactive terminal; a plain iterator otherwise."""
    if not _progress_shown.get() or (total is not None and total < PROGRESS_MIN_ITEMS):
        yield from items
        return
    from tqdm import tqdm

    # disable=None: tqdm itself turns the bar off when stderr is not a terminal.
    yield from tqdm(items, total=total, desc=desc, unit="entry", disable=None, file=sys.stderr, leave=False)


# --- file helpers --------------------------------------------------------------------------------------


def read_json(path: Path) -> Any:
    """The file's JSON value, or MalformedFile naming the file and the line."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise MalformedFile(path, f"not UTF-8 ({exc.reason})") from exc
    except json.JSONDecodeError as exc:
        raise MalformedFile(path, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc


def read_ndjson(path: Path) -> list[tuple[int, Any]]:
    """(line number, value) of every non-blank line, or MalformedFile naming the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedFile(path, f"not UTF-8 ({exc.reason})") from exc
    values = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            values.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise MalformedFile(path, f"invalid JSON: {exc.msg}", entry=f"line {number}") from exc
    return values


def write_json(path: Path, value: Any) -> None:
    """Atomic whole-file write (temp file, then replace), like the original's views."""
    _write_text(path, json.dumps(value, ensure_ascii=False, indent=2))


def write_ndjson(path: Path, values: Iterable[Any]) -> None:
    _write_text(path, "".join(json.dumps(value, ensure_ascii=False) + "\n" for value in values))


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_records(path: Path, records: list[Any]) -> int | None:
    """Write a JSON list; an empty one only over an earlier export (so it does not stay stale)."""
    if not records and not path.exists():
        return None
    write_json(path, records)
    return len(records)


# --- writing parsed rows -------------------------------------------------------------------------------

IN_CHUNK = 900  # keys per ``__in`` lookup: under SQLite's bound-parameter limit


def chunked(values: Sequence[T], size: int = IN_CHUNK) -> Iterator[Sequence[T]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def rows_upsert(
    model: type[Row],
    *,
    character: Character,
    incoming: Sequence[Row],
    key: str,
    fields: Sequence[str],
    pool: str = "",
) -> ImportResult:
    """Bind parsed rows to ``character`` and write them by their file id ``key``: a new id is inserted,
    a known one is updated only when one of ``fields`` differs (so a re-import changes nothing).

    ``pool``: the recall pool the rows belong to; the result then names the rows written."""
    existing: dict[Any, Row] = {}
    for keys in chunked([getattr(row, key) for row in incoming]):
        existing.update(
            (getattr(row, key), row)
            for row in model._base_manager.filter(character_id=character.pk, **{f"{key}__in": keys})
        )
    new: list[Row] = []
    changed: dict[Any, Row] = {}
    unchanged = 0
    for row in incoming:
        row.character_id = character.pk  # type: ignore[attr-defined]
        current = existing.get(getattr(row, key))
        if current is None:
            new.append(row)
            existing[getattr(row, key)] = row  # the same id later in the file updates this one
            continue
        if all(getattr(current, name) == getattr(row, name) for name in fields):
            unchanged += 1
            continue
        for name in fields:
            setattr(current, name, getattr(row, name))
        if current.pk is not None:
            changed[current.pk] = current
    model._base_manager.bulk_create(new, batch_size=1000)
    model._base_manager.bulk_update(list(changed.values()), list(fields), batch_size=1000)
    result = ImportResult(created=len(new), updated=len(changed), unchanged=unchanged)
    if not pool:
        return result
    written = {row.pk for row in new if row.pk is not None} | set(changed)
    if len(written) < len(new) + len(changed):  # a backend that returns no keys from a bulk insert
        return result
    return replace(result, pool=pool, rows=frozenset(written))


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
                for name, finisher in sorted(_finishers.items()):
                    character = lock_character(character_id)
                    finished = finisher(character, payloads)
                    if finished.changed:
                        report.files.append(FileImported(name, finished))
                if report.written:
                    _log_changes(character_id=character_id, written=report.written)
                    changed.append(character_id)
                reports.append(report)
    for hook in list(_import_hooks):
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
    return path.name in _root_handlers and not any((path / h.filename).exists() for h in file_handlers())


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


# Run after an import has committed, with the ids of the characters whose memory it changed (recall
# builds and saves their indexes, so a server's first query after a large import loads one).
ImportHook = Callable[[list[int]], None]
_import_hooks: list[ImportHook] = []


def register_import_hook(hook: ImportHook) -> None:
    if hook not in _import_hooks:
        _import_hooks.append(hook)


def unregister_import_hook(hook: ImportHook) -> None:
    if hook in _import_hooks:
        _import_hooks.remove(hook)


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


# --- process-wide files at the root of the memory folder (reference §2.15) ---------------------------------


@dataclass(frozen=True)
class RootFileHandler(Generic[Parsed]):
    """A file (or folder: ``knowledge/``) beside the character directories (``memory/speaker_trust.json``),
    not of one character.

    ``read(path)`` validates without the database (raising ``MalformedFile``); ``write(parsed)`` runs
    in the import's transaction; ``export(path)`` writes the file and returns its entries, or None when
    there is nothing to write.
    """

    filename: str
    read: Callable[[Path], Parsed]
    write: Callable[[Parsed], ImportResult]
    export: Callable[[Path], int | None]


_root_handlers: dict[str, RootFileHandler[Any]] = {}


def register_root_file_handler(handler: RootFileHandler[Any]) -> None:
    _root_handlers[handler.filename] = handler


def root_file_handlers() -> list[RootFileHandler[Any]]:
    return sorted(_root_handlers.values(), key=lambda h: h.filename)


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
