"""Import/export of the original per-character directory layout (``ROOT/<name>/…``).

The kernel knows no layer: each layer registers one ``FileHandler`` per file it owns, from its
AppConfig.ready(), and the ``import_memory`` / ``export_memory`` commands walk the registry in
``order``. Later layers extend the same commands by registering more files.

Importers follow one rule: parse and validate the whole file first, raising ``MalformedFile`` (naming
the file and the entry) before touching the database, then write in one transaction, so a malformed
file imports nothing and a valid one imports everything. Importing the same file twice changes
nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from nekomem.characters.models import Character

T = TypeVar("T")


class MalformedFile(Exception):
    """A file (or one entry of it) cannot be imported; nothing was imported from that file."""

    def __init__(self, path: Path | str, message: str, *, entry: int | str | None = None) -> None:
        where = f"{path}" if entry is None else f"{path}, entry {entry}"
        super().__init__(f"{where}: {message}")
        self.path = str(path)
        self.entry = entry


@dataclass(frozen=True)
class ImportResult:
    created: int = 0
    updated: int = 0
    unchanged: int = 0


@dataclass(frozen=True)
class FileHandler:
    """How one file of the layout is read and written.

    ``importer(character, path)`` is called only when the file exists; ``exporter(character, path)``
    writes it (or skips when the layer holds nothing) and returns how many entries it wrote.
    """

    filename: str
    order: int
    importer: Callable[[Character, Path], ImportResult]
    exporter: Callable[[Character, Path], int]


_handlers: dict[str, FileHandler] = {}


def register_file_handler(handler: FileHandler) -> None:
    _handlers[handler.filename] = handler


def file_handlers() -> list[FileHandler]:
    return sorted(_handlers.values(), key=lambda h: (h.order, h.filename))


def progress(items: Iterable[T], *, total: int | None = None, desc: str = "") -> Iterator[T]:
    """A tqdm bar on long runs at an interactive terminal; a plain iterator otherwise."""
    if total is not None and total < 1000:
        yield from items
        return
    from tqdm import tqdm

    yield from tqdm(items, total=total, desc=desc, unit="entry", disable=None, file=sys.stderr, leave=False)


def read_json(path: Path) -> Any:
    """The file's JSON value, or MalformedFile naming the file and the line."""
    import json

    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise MalformedFile(path, f"not UTF-8 ({exc.reason})") from exc
    except json.JSONDecodeError as exc:
        raise MalformedFile(path, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from exc


def write_json(path: Path, value: Any) -> None:
    """Atomic whole-file write (temp file, then replace), like the original's views."""
    import json
    import os

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(value, ensure_ascii=False, indent=2), encoding="utf-8")
    os.replace(tmp, path)
