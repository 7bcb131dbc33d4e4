"""The first start in an install folder takes in every character's files while the chat routes answer
409 ``install_migration``; a block left by a start that never finished is lifted once standalone.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from install import install_root
from install.models import FolderCharacter, FolderFile, FolderState
from install.records import SCRATCH_DIR, character_folders, character_stamp, file_records, file_sha256
from install.take_in import TakenIn, folder_take_in
from install.writing import handler_stamp, path_clear
from nekomem.characters.models import Character
from nekomem.portability import file_handlers
from nekomem.runtime.models import StorageState
from nekomem.runtime.startup import storage_release
from nekomem.runtime.state import storage_block

logger = logging.getLogger(__name__)
MIGRATION_REASON = "install_migration"


def install_migration_needed() -> bool:
    root = install_root()
    if root is None:
        return False
    state = FolderState.objects.filter(pk=1).first()
    return state is None or state.root != str(root) or state.migration != "done"


def install_migration_begin() -> bool:
    """Before the server starts: when the install folder was never taken in, the chat routes answer
    409 ``install_migration`` until the migration (run by the writer thread) has finished."""
    if not install_migration_needed():
        return False
    storage_block(reason=MIGRATION_REASON)
    FolderState.objects.update_or_create(
        pk=1,
        defaults={
            "migration": "running",
            "migration_total": len(character_folders()),
            "migration_done": 0,
            "migration_current": "",
            "migration_started_at": timezone.now(),
            "migration_finished_at": None,
        },
    )
    logger.info("install migration: storage blocked until memory/ is taken in")
    return True


def install_migration_abandoned_release() -> None:
    """Standalone again: a migration block left by an install start that never finished is lifted."""
    if install_root() is None:
        left = StorageState.objects.filter(pk=1, blocked=True, reason=MIGRATION_REASON)
        left.update(blocked=False, reason="")


def install_migration_run() -> list[TakenIn]:
    """Take in every character folder of ``memory/`` (one transaction each, the import's rules; a
    second run changes nothing), then lift the migration block."""
    root = install_root()
    assert root is not None
    folders = character_folders()
    FolderState.objects.update_or_create(
        pk=1, defaults={"migration": "running", "migration_total": len(folders), "migration_done": 0}
    )
    reports = []
    for position, (name, folder) in enumerate(folders.items(), start=1):
        FolderState.objects.filter(pk=1).update(migration_current=name)
        logger.info("install migration: %d/%d %s", position, len(folders), name)
        report = folder_take_in(name=name, folder=folder)
        if report.created:
            _written_as_taken_in(name, folder)
        reports.append(report)
        FolderState.objects.filter(pk=1).update(migration_done=position)
    with transaction.atomic():
        FolderState.objects.filter(pk=1).update(
            root=str(root), migration="done", migration_current="", migration_finished_at=timezone.now()
        )
    refused = sum(len(r.refused) for r in reports)
    logger.info("install migration: done, %d characters, %d files refused", len(reports), refused)
    if StorageState.objects.filter(pk=1, blocked=True, reason=MIGRATION_REASON).exists():
        storage_release()  # only our own block: a block the launcher set since stays
    return reports


def _written_as_taken_in(name: str, folder: Path) -> None:
    """A character the migration created holds exactly its files: they count as written (each file's
    stamp, or the sha256 of nekomem's own export of it, is noted), so the first start neither rewrites
    the user's files in nekomem's formatting nor adds files the folder did not have."""
    character = Character.objects.get(name=name)
    records = file_records(name)
    scratch = folder.parent / SCRATCH_DIR / name
    for handler in file_handlers():
        record = records.get(handler.filename)
        if record is not None and record.refused:
            continue
        stamp = handler_stamp(handler, character)
        if stamp and record is not None:
            FolderFile.objects.filter(pk=record.pk).update(stamp=stamp)
            continue
        exported = scratch / handler.filename
        path_clear(exported)
        exported.parent.mkdir(parents=True, exist_ok=True)
        if handler.export(character, exported) is None:
            continue
        sha = file_sha256(exported)
        path_clear(exported)
        if record is not None:
            FolderFile.objects.filter(pk=record.pk).update(stamp=stamp, exported_sha256=sha)
        else:  # not in the folder, and nekomem would write it as this
            FolderFile.objects.create(name=name, filename=handler.filename, stamp=stamp, exported_sha256=sha)
    shutil.rmtree(scratch, ignore_errors=True)
    FolderCharacter.objects.update_or_create(name=name, defaults={"stamp": character_stamp(character)})
