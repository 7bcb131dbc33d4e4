"""The portability registry: each layer registers one ``FileHandler`` per file of the original layout
it owns (and ``RootFileHandler``s for the process-wide files beside the characters), plus import
finishers and post-import hooks, from its ``AppConfig.ready()``; the kernel knows no layer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from nekomem.characters.models import Character

Parsed = TypeVar("Parsed")
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


def import_finishers() -> list[tuple[str, ImportFinisher]]:
    return sorted(_finishers.items())


def register_file_handler(handler: FileHandler[Any]) -> None:
    _handlers[handler.filename] = handler


def file_handlers() -> list[FileHandler[Any]]:
    return sorted(_handlers.values(), key=lambda h: (h.order, h.filename))


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


def import_hooks() -> list[ImportHook]:
    return list(_import_hooks)


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
