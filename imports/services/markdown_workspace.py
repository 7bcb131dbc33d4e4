"""Reading an OpenClaw or Hermes workspace (a folder or a zip of one) into import candidates.

``USER.md`` holds the master's persona, ``SOUL.md`` the companion's, ``MEMORY.md`` lines become facts,
and dated daily notes (``YYYY-MM-DD.md``, usually under ``memory/``) become facts of that day. At most
45 days are taken per import (the newest); the rest are counted as warnings so the user can run the
import again for them."""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path, PurePosixPath
from typing import Any

from imports.services.external_import import CANDIDATE_TEXT_MAX, CANDIDATES_MAX, ImportBadInput

DAILY_NOTES_MAX = 45
# A workspace file larger than this is not a memory file (a log, an export): it is skipped with a warning.
FILE_BYTES_MAX = 2_000_000
_DAILY = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[^/]*)?\.md$", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_PERSONA_FILES = {"user.md": "master", "soul.md": "neko"}


@dataclass
class Workspace:
    source_format: str
    imported_files: list[str] = field(default_factory=list)
    candidates: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped_days: list[str] = field(default_factory=list)


def markdown_lines(text: str) -> list[tuple[str, str | None]]:
    """Each meaningful line with the heading it sits under; headings, fences and blanks are not lines."""
    lines: list[tuple[str, str | None]] = []
    section: str | None = None
    fenced = False
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            continue
        if fenced or not stripped or stripped.startswith("<!--") or set(stripped) <= {"-", "=", "*", "_"}:
            continue
        if stripped.startswith("#"):
            section = stripped.lstrip("#").strip() or None
            continue
        body = _BULLET.sub("", stripped).strip()
        if body:
            lines.append((body, section))
    return lines


def _files(path: Path) -> dict[str, bytes]:
    if path.is_dir():
        found: dict[str, bytes] = {}
        for item in sorted(path.rglob("*.md")):
            if item.is_file() and not any(part.startswith(".") for part in item.relative_to(path).parts):
                size = item.stat().st_size
                found[item.relative_to(path).as_posix()] = b"" if size > FILE_BYTES_MAX else item.read_bytes()
        return found
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = [
                i
                for i in archive.infolist()
                if not i.is_dir() and i.filename.lower().endswith(".md") and "__MACOSX" not in i.filename
            ]
            return {i.filename: b"" if i.file_size > FILE_BYTES_MAX else archive.read(i) for i in names}
    raise ImportBadInput(f"{path} is neither a folder nor a zip file")


def _strip_root(files: dict[str, bytes]) -> dict[str, bytes]:
    """A zip of the folder itself puts everything under one top folder; drop it."""
    tops = {PurePosixPath(name).parts[0] for name in files}
    if len(tops) == 1 and all(len(PurePosixPath(n).parts) > 1 for n in files):
        return {PurePosixPath(*PurePosixPath(n).parts[1:]).as_posix(): data for n, data in files.items()}
    return files


def workspace_read(*, path: Path, source_format: str = "openclaw") -> Workspace:
    files = _strip_root(_files(path))
    ws = Workspace(source_format=source_format)
    daily: dict[str, list[str]] = {}
    for name in sorted(files):
        base = PurePosixPath(name).name
        match = _DAILY.match(base)
        if base.lower() in _PERSONA_FILES or base.lower() == "memory.md":
            pass
        elif match:
            try:
                date.fromisoformat(match.group(1))
            except ValueError:
                continue
            daily.setdefault(match.group(1), []).append(name)
            continue
        else:
            continue
        _take(ws, name, files[name], entity=_PERSONA_FILES.get(base.lower()), day=None)
    days = sorted(daily, reverse=True)
    ws.skipped_days = sorted(days[DAILY_NOTES_MAX:])
    if ws.skipped_days:
        ws.warnings.append(
            f"{len(ws.skipped_days)} daily notes beyond the newest {DAILY_NOTES_MAX} days were not imported"
        )
    for day in sorted(days[:DAILY_NOTES_MAX]):
        for name in daily[day]:
            _take(ws, name, files[name], entity=None, day=day)
    if not ws.candidates:
        raise ImportBadInput("no USER.md, SOUL.md, MEMORY.md or dated daily note with any content was found")
    if len(ws.candidates) > CANDIDATES_MAX:
        left_out = len(ws.candidates) - CANDIDATES_MAX
        ws.warnings.append(f"{left_out} lines beyond {CANDIDATES_MAX} were left out")
        ws.candidates = ws.candidates[:CANDIDATES_MAX]
    return ws


def _take(ws: Workspace, name: str, data: bytes, *, entity: str | None, day: str | None) -> None:
    if not data:
        ws.warnings.append(f"{name}: empty or too large, skipped")
        return
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        ws.warnings.append(f"{name}: not UTF-8, skipped")
        return
    ws.imported_files.append(name)
    for line, section in markdown_lines(text):
        if len(line) > CANDIDATE_TEXT_MAX:
            ws.warnings.append(f"{name}: a line longer than {CANDIDATE_TEXT_MAX} characters was skipped")
            continue
        candidate: dict[str, Any] = {
            "text": line,
            "entity": entity or "master",
            "target": "persona" if entity else "facts",
            "source_file": name,
            "source_section": section,
        }
        if day:
            candidate["event_date"] = day
        ws.candidates.append(candidate)
