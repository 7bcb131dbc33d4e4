"""The live views: for each character whose memory changed, the files whose content changed are
exported to a scratch folder beside the real one, compared by sha256 with what is there and moved
into place with one rename; a large file whose layer gives a change stamp is not even exported while
its stamp holds, and the raw log is appended in place.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from install import install_memory_dir
from install.models import FolderCharacter, FolderFile
from install.records import (
    SCRATCH_DIR,
    character_stamp,
    file_record,
    file_records,
    file_sha256,
    file_stat,
    files_under,
)
from nekomem.characters.models import Character
from nekomem.portability import FileHandler, file_handlers
from nekomem.runtime.state import current_block

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class FileWritten:
    filename: str
    seconds: float
    appended: bool = False


def handler_stamp(handler: FileHandler[Any], character: Character) -> str:
    if handler.stamp is None:
        return ""
    return json.dumps(handler.stamp(character), default=str, sort_keys=True)


def path_clear(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _move_into_place(exported: Path, path: Path) -> None:
    if not exported.is_dir():
        os.replace(exported, path)  # atomic: a reader sees the old file or the new one
        return
    # A shard directory: each shard is renamed into place (a shard nekomem did not write is kept).
    for part in files_under(exported):
        target = path / part.relative_to(exported)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(part, target)


def _is_large(handler: FileHandler[Any]) -> bool:
    """A file that is exported whole only when its stamp moved (facts, events): it can take seconds."""
    return handler.stamp is not None and handler.append is None


def folder_write(
    *, character: Character, folder: Path, handlers: list[FileHandler[Any]] | None = None
) -> list[FileWritten]:
    """Bring the character's files in ``folder`` (of ``handlers`` only, when given) up to date with its
    memory; returns what was written.

    A file someone else changed since nekomem's record is left for the take-in (the file wins), and a
    refused one is left alone until a valid file replaces it.
    """
    memory = folder.parent
    scratch = memory / SCRATCH_DIR / character.name
    records = file_records(character.name)
    written: list[FileWritten] = []
    folder.mkdir(parents=True, exist_ok=True)
    for handler in file_handlers() if handlers is None else handlers:
        path = folder / handler.filename
        record = records.get(handler.filename)
        if record is not None and record.refused:
            continue
        stat = file_stat(path)
        if stat is not None and (record is None or (record.size, record.mtime_ns) != stat):
            continue  # someone else's file, not taken in yet: the next take-in goes first
        stamp = handler_stamp(handler, character)
        if stamp and record is not None and record.stamp == stamp and stat is not None:
            continue
        started = time.perf_counter()
        if handler.append is not None and stat is not None:
            added = handler.append(character, path)
            if added is not None:
                sha = file_sha256(path)
                file_record(
                    name=character.name, filename=handler.filename, path=path, sha256=sha, stamp=stamp
                )
                if added:
                    took = time.perf_counter() - started
                    written.append(FileWritten(handler.filename, took, appended=True))
                continue
        exported = scratch / handler.filename
        path_clear(exported)
        exported.parent.mkdir(parents=True, exist_ok=True)
        if stat is not None:
            # An export writes an empty list only over an earlier file (``write_records``): there is one.
            if path.is_dir():
                exported.mkdir()
            else:
                exported.touch()
        if handler.export(character, exported) is None:
            path_clear(exported)
            continue
        sha = file_sha256(exported)
        same = record is not None and (
            (stat is not None and record.sha256 == sha) or record.exported_sha256 == sha
        )
        if same:
            path_clear(exported)
            FolderFile.objects.filter(pk=record.pk).update(stamp=stamp)  # type: ignore[union-attr]
            continue
        if file_stat(path) != stat:
            path_clear(exported)  # someone saved the file while it was exported: theirs wins, taken in next
            continue
        _move_into_place(exported, path)
        path_clear(exported)
        file_record(
            name=character.name,
            filename=handler.filename,
            path=path,
            sha256=file_sha256(path) if path.is_dir() else sha,
            stamp=stamp,
        )
        written.append(FileWritten(handler.filename, time.perf_counter() - started))
    shutil.rmtree(scratch, ignore_errors=True)
    with contextlib.suppress(OSError):
        scratch.parent.rmdir()  # only when empty: no other writer is using it
    return written


def folder_write_views(*, every_file: bool = False) -> dict[str, list[FileWritten]]:
    """Write the files of every character whose change stamp moved since its last write (all of them
    when ``every_file``); stops as soon as storage is blocked. Returns what was written, by name."""
    memory = install_memory_dir()
    if memory is None:
        return {}
    states = {s.name: s for s in FolderCharacter.objects.all()}
    due: list[tuple[Character, str]] = []
    for character in Character.objects.order_by("pk"):
        stamp = character_stamp(character)
        state = states.get(character.name)
        if state is not None and state.stamp == stamp and (not every_file or state.vanished_at is not None):
            continue
        due.append((character, stamp))
    # Every character's small files first, then the large ones: a turn reaches recent.json in the
    # same pass even while another character's 100 000-fact facts.json takes seconds to write.
    handlers = file_handlers()
    small = [h for h in handlers if not _is_large(h)]
    large = [h for h in handlers if _is_large(h)]
    written: dict[str, list[FileWritten]] = {}
    for phase in (small, large):
        for character, _stamp in due:
            if current_block() is not None:
                return written  # block means nothing writes, from the next file on
            files = folder_write(character=character, folder=memory / character.name, handlers=phase)
            if files:
                written.setdefault(character.name, []).extend(files)
                logger.info(
                    "install folder: wrote %s/{%s} in %.0f ms",
                    character.name,
                    ",".join(f.filename for f in files),
                    1000 * sum(f.seconds for f in files),
                )
    for character, stamp in due:
        FolderCharacter.objects.update_or_create(
            name=character.name, defaults={"stamp": stamp, "vanished_at": None}
        )
    return written
