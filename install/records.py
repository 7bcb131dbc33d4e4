"""What nekomem knows of the install's memory folder: each file's fingerprint (size, mtime, sha256) as
last written or taken in, the characters' folders, and a stamp that moves with a character's memory.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from django.db.models import Count, Max
from django.utils import timezone

from install import install_memory_dir
from install.models import FolderFile
from nekomem.characters.models import Character
from nekomem.characters.names import InvalidCharacterName, validate_character_name
from nekomem.journal.models import Event, Job, OutboxOp
from nekomem.portability import file_handlers

# Beside the characters' folders, so a finished file is renamed into place on the same file system.
SCRATCH_DIR = ".nekomem-scratch"


def files_under(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))


def file_stat(path: Path) -> tuple[int, int] | None:
    """(size, mtime in ns) of a file, or of a shard directory's files together; None when absent."""
    try:
        if path.is_dir():
            stats = [p.stat() for p in files_under(path)]
            return sum(s.st_size for s in stats), max((s.st_mtime_ns for s in stats), default=0)
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    if path.is_dir():
        for part in files_under(path):
            digest.update(part.relative_to(path).as_posix().encode() + b"\0")
            digest.update(file_sha256(part).encode())
        return digest.hexdigest()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1024 * 1024), b""):
            digest.update(chunk)
    return digest.hexdigest()


def file_record(
    *, name: str, filename: str, path: Path, sha256: str, stamp: str | None = None, refused: str = ""
) -> None:
    size, mtime_ns = file_stat(path) or (0, 0)
    defaults: dict[str, Any] = {
        "size": size,
        "mtime_ns": mtime_ns,
        "sha256": sha256,
        "refused": refused,
        "refused_at": timezone.now() if refused else None,
        "exported_sha256": "",
    }
    if stamp is not None:
        defaults["stamp"] = stamp
    FolderFile.objects.update_or_create(name=name, filename=filename, defaults=defaults)


def file_records(name: str) -> dict[str, FolderFile]:
    return {r.filename: r for r in FolderFile.objects.filter(name=name)}


def character_folders() -> dict[str, Path]:
    """``memory/<name>/`` folders that hold at least one file of the layout, by name."""
    memory = install_memory_dir()
    if memory is None or not memory.is_dir():
        return {}
    known = [handler.filename for handler in file_handlers()]
    found = {}
    for folder in sorted(memory.iterdir()):
        if not folder.is_dir() or folder.name.startswith("."):
            continue
        try:
            validate_character_name(folder.name)
        except InvalidCharacterName:
            continue
        if any((folder / filename).exists() for filename in known):
            found[folder.name] = folder
    return found


def character_stamp(character: Character) -> str:
    """A value that moves with (nearly) every change of the character's memory: the recall version,
    the raw rows, the last turn, its events, outbox ops and jobs, and its own settings."""
    events = Event.objects.filter(character=character).aggregate(n=Count("seq"), last=Max("seq"))
    ops = OutboxOp.objects.filter(character=character).aggregate(n=Count("op_id"), last=Max("updated_at"))
    jobs = Job.objects.filter(character=character).aggregate(last=Max("updated_at"))
    return json.dumps(
        [
            character.memory_version,
            character.raw_rows_written,
            character.last_activity_at,
            character.master_name,
            character.master_nicknames,
            character.language,
            character.card,
            events,
            ops,
            jobs,
        ],
        default=str,
        sort_keys=True,
        ensure_ascii=False,
    )
