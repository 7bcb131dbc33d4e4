"""What every file handler uses: JSON and NDJSON reading and writing (atomic, the original's shapes),
progress bars for long imports, and the chunked upsert of parsed rows.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from django.db import models

from nekomem.characters.models import Character
from nekomem.portability.registry import ImportResult, MalformedFile

T = TypeVar("T")
Row = TypeVar("Row", bound=models.Model)


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
