"""Edits from outside the server, taken in: a file whose fingerprint differs from the record was changed
by someone else; it is validated and imported through its layer's ``FileHandler`` (the file wins), or
refused whole, nothing stored changing, and the refusal kept. A character whose folder appeared is
imported; one whose folder vanished is kept and reported.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.utils import timezone

from install import install_memory_dir
from install.models import FolderCharacter, FolderFile
from install.records import (
    character_folders,
    character_stamp,
    file_record,
    file_records,
    file_sha256,
    file_stat,
)
from nekomem.characters.models import Character
from nekomem.portability import ImportRefused, ImportSource, file_handlers, memory_import

logger = logging.getLogger(__name__)


@dataclass
class TakenIn:
    name: str
    files: list[str] = field(default_factory=list)  # taken in
    refused: dict[str, str] = field(default_factory=dict)  # file -> why
    created: bool = False


def _changed_files(name: str, folder: Path) -> dict[str, str]:
    """The files of ``folder`` that differ from nekomem's record of them: filename -> sha256."""
    records = file_records(name)
    changed = {}
    for handler in file_handlers():
        path = folder / handler.filename
        stat = file_stat(path)
        record = records.get(handler.filename)
        if stat is None:
            if record is not None and record.refused:
                record.delete()  # the refused file is gone: nekomem may write this file again
            continue
        if record is not None and (record.size, record.mtime_ns) == stat:
            continue
        sha = file_sha256(path)
        if record is not None and record.sha256 == sha:
            # Touched (or copied back) with the same content: nothing to take in.
            FolderFile.objects.filter(pk=record.pk).update(size=stat[0], mtime_ns=stat[1])
            continue
        changed[handler.filename] = sha
    return changed


def _refused_files(name: str, pending: Collection[str], problems: list[str]) -> dict[str, str]:
    """Which of ``pending`` each problem of a refused import names (``<name>/<file>[…]: why``)."""
    found: dict[str, str] = {}
    for problem in problems:
        for filename in pending:
            prefix = f"{name}/{filename}"
            if problem.startswith(prefix) and problem[len(prefix) : len(prefix) + 1] in (":", ",", "/"):
                found[filename] = f"{found[filename]}; {problem}" if filename in found else problem
    return found


def folder_take_in(*, name: str, folder: Path) -> TakenIn:
    """Take in the files of ``memory/<name>/`` someone else changed, validated as an import.

    A malformed file is refused whole (nothing of it is stored) and the others are still taken in;
    the refusal stays on record, with the file's fingerprint, until another file replaces it.
    """
    report = TakenIn(name=name)
    changed = _changed_files(name, folder)
    pending = set(changed)
    while pending:
        try:
            results = memory_import(sources=[ImportSource(name=name, folder=folder, only=frozenset(pending))])
        except ImportRefused as exc:
            refused = _refused_files(name, pending, exc.problems) or dict.fromkeys(
                pending, "; ".join(exc.problems)
            )
            report.refused.update(refused)
            pending -= set(refused)
            continue
        report.created = results[0].created
        break
    for filename in pending:
        file_record(name=name, filename=filename, path=folder / filename, sha256=changed[filename], stamp="")
        report.files.append(filename)
    for filename, reason in report.refused.items():
        logger.warning("install folder: %s/%s refused, nothing of it taken in: %s", name, filename, reason)
        path = folder / filename
        file_record(name=name, filename=filename, path=path, sha256=changed[filename], refused=reason)
    if report.files:
        logger.info("install folder: took in %s/{%s}", name, ",".join(sorted(report.files)))
    return report


@dataclass
class FolderReread:
    taken_in: list[TakenIn] = field(default_factory=list)
    vanished: list[str] = field(default_factory=list)  # characters kept whose folder is gone

    def as_dict(self) -> dict[str, Any]:
        return {
            "taken_in": {r.name: sorted(r.files) for r in self.taken_in if r.files},
            "created": sorted(r.name for r in self.taken_in if r.created),
            "refused": {r.name: r.refused for r in self.taken_in if r.refused},
            "vanished": self.vanished,
        }


def install_folder_reread(*, names: Collection[str] | None = None) -> FolderReread | None:
    """Take in every file someone else changed (of ``names`` only, when given): a character whose
    folder appeared is imported, one whose folder vanished is kept and reported. None when standalone.

    ``continue``, ``/reload`` and ``/release_character`` call it at once; the writer's pass as well.
    """
    if install_memory_dir() is None:
        return None
    report = FolderReread()
    folders = character_folders()
    for name, folder in folders.items():
        if names is None or name in names:
            report.taken_in.append(folder_take_in(name=name, folder=folder))
    if names is None:
        report.vanished = _vanished(set(folders))
    return report


def install_folder_reread_answer(names: Collection[str] | None) -> dict[str, Any] | None:
    """The runtime's reread hook (``continue``, ``/reload``, ``/release_character``): what was taken
    in, which ``continue`` answers under ``install_folder``; None when standalone."""
    reread = install_folder_reread(names=names)
    return reread.as_dict() if reread is not None else None


def _vanished(present: set[str]) -> list[str]:
    """Characters whose folder was there (nekomem wrote or took in its files) and is gone: kept, not
    deleted, reported; their files are written again only when their memory changes."""
    had_folder = set(FolderFile.objects.values_list("name", flat=True).distinct())
    gone = sorted(Character.objects.filter(name__in=had_folder - present).values_list("name", flat=True))
    for name in gone:
        state, _ = FolderCharacter.objects.get_or_create(name=name)
        if state.vanished_at is None:
            logger.warning("install folder: memory/%s/ is gone; the character and its memory are kept", name)
            character = Character.objects.get(name=name)
            FolderCharacter.objects.filter(pk=state.pk).update(
                vanished_at=timezone.now(), stamp=character_stamp(character)
            )
    FolderCharacter.objects.filter(vanished_at__isnull=False).exclude(name__in=gone).update(vanished_at=None)
    return gone
