"""The install's memory folder stays the user's (reference §2, §8, §12).

In install mode ``memory/<name>/`` is what the rest of the original shares: its memory browser edits
``recent.json`` in place, cloud save copies the folder away and back, users open the files by hand. So:

- **Live views.** A pass every ``PASS_SECONDS`` writes, for each character whose memory changed, the
  files whose content changed: exported to a scratch folder beside the real one, compared by sha256
  with what is there, and moved into place with one rename (atomic, as the original's views). A large
  file whose layer gives a change stamp is not even exported while its stamp holds; the raw log
  (``time_indexed.db``) is appended in place. A burst of turns between two passes costs one write.
- **Edits from outside.** Each pass first compares every file's size and mtime (and, when they moved,
  sha256) with the record of what nekomem last wrote or took in. A file that differs was changed by
  someone else: it is validated and taken in through the import (the file wins); a file that fails
  validation is refused whole, nothing stored changes, and the refusal is kept (logged, the status
  view, the character's page) and the file left alone until a valid one replaces it.
- **First start.** The first start in an install folder takes in every character's files (the
  migration) while the chat routes answer 409 ``install_migration``.

The kernel knows no layer: the files are the portability registry's ``FileHandler``s.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import close_old_connections, transaction
from django.db.models import Count, Max
from django.utils import timezone

from install import install_memory_dir, install_root
from install.models import FolderCharacter, FolderFile, FolderState
from nekomem.characters.models import Character
from nekomem.characters.names import InvalidCharacterName, validate_character_name
from nekomem.journal.models import Event, Job, OutboxOp
from nekomem.portability import FileHandler, ImportRefused, ImportSource, file_handlers, memory_import
from nekomem.runtime.models import StorageState
from nekomem.runtime.startup import startup_run, storage_release
from nekomem.runtime.state import current_block, storage_block

logger = logging.getLogger(__name__)

# How often the folder is looked at: an edit or a change reaches the other side within this (plus the
# time the write itself takes), well inside the 10 s the original's browser and cloud save allow.
PASS_SECONDS = 2.0
# Every so often every character's files are compared whatever its change stamp says, so a change
# that moves none of the stamp's counters still reaches its file.
FULL_PASS_SECONDS = 60.0
MIGRATION_REASON = "install_migration"
# Beside the characters' folders, so a finished file is renamed into place on the same file system.
SCRATCH_DIR = ".nekomem-scratch"
# The background writer yields the CPU to the chat's requests.
WRITER_NICENESS = 10


# --- fingerprints ------------------------------------------------------------------------------------------


def _files_under(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))


def file_stat(path: Path) -> tuple[int, int] | None:
    """(size, mtime in ns) of a file, or of a shard directory's files together; None when absent."""
    try:
        if path.is_dir():
            stats = [p.stat() for p in _files_under(path)]
            return sum(s.st_size for s in stats), max((s.st_mtime_ns for s in stats), default=0)
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    if path.is_dir():
        for part in _files_under(path):
            digest.update(part.relative_to(path).as_posix().encode() + b"\0")
            digest.update(file_sha256(part).encode())
        return digest.hexdigest()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1024 * 1024), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _record(
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


def _records(name: str) -> dict[str, FolderFile]:
    return {r.filename: r for r in FolderFile.objects.filter(name=name)}


# --- the folder's characters -------------------------------------------------------------------------------


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


# --- taking in edits from outside ---------------------------------------------------------------------------


@dataclass
class TakenIn:
    name: str
    files: list[str] = field(default_factory=list)  # taken in
    refused: dict[str, str] = field(default_factory=dict)  # file -> why
    created: bool = False


def _changed_files(name: str, folder: Path) -> dict[str, str]:
    """The files of ``folder`` that differ from nekomem's record of them: filename -> sha256."""
    records = _records(name)
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
        _record(name=name, filename=filename, path=folder / filename, sha256=changed[filename], stamp="")
        report.files.append(filename)
    for filename, reason in report.refused.items():
        logger.warning("install folder: %s/%s refused, nothing of it taken in: %s", name, filename, reason)
        path = folder / filename
        _record(name=name, filename=filename, path=path, sha256=changed[filename], refused=reason)
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


# --- writing the views --------------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class FileWritten:
    filename: str
    seconds: float
    appended: bool = False


def _handler_stamp(handler: FileHandler[Any], character: Character) -> str:
    if handler.stamp is None:
        return ""
    return json.dumps(handler.stamp(character), default=str, sort_keys=True)


def _clear(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _move_into_place(exported: Path, path: Path) -> None:
    if not exported.is_dir():
        os.replace(exported, path)  # atomic: a reader sees the old file or the new one
        return
    # A shard directory: each shard is renamed into place (a shard nekomem did not write is kept).
    for part in _files_under(exported):
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
    records = _records(character.name)
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
        stamp = _handler_stamp(handler, character)
        if stamp and record is not None and record.stamp == stamp and stat is not None:
            continue
        started = time.perf_counter()
        if handler.append is not None and stat is not None:
            added = handler.append(character, path)
            if added is not None:
                sha = file_sha256(path)
                _record(name=character.name, filename=handler.filename, path=path, sha256=sha, stamp=stamp)
                if added:
                    took = time.perf_counter() - started
                    written.append(FileWritten(handler.filename, took, appended=True))
                continue
        exported = scratch / handler.filename
        _clear(exported)
        exported.parent.mkdir(parents=True, exist_ok=True)
        if stat is not None:
            # An export writes an empty list only over an earlier file (``write_records``): there is one.
            if path.is_dir():
                exported.mkdir()
            else:
                exported.touch()
        if handler.export(character, exported) is None:
            _clear(exported)
            continue
        sha = file_sha256(exported)
        same = record is not None and (
            (stat is not None and record.sha256 == sha) or record.exported_sha256 == sha
        )
        if same:
            _clear(exported)
            FolderFile.objects.filter(pk=record.pk).update(stamp=stamp)  # type: ignore[union-attr]
            continue
        if file_stat(path) != stat:
            _clear(exported)  # someone saved the file while it was exported: theirs wins, taken in next
            continue
        _move_into_place(exported, path)
        _clear(exported)
        _record(
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


# --- one pass, and the writer thread ------------------------------------------------------------------------


def install_folder_pass(*, every_file: bool = False) -> bool:
    """Take in what someone else changed, then write what changed here; nothing while storage is
    blocked. Returns whether the pass ran."""
    if install_memory_dir() is None or current_block() is not None:
        return False
    install_folder_reread()
    folder_write_views(every_file=every_file)
    FolderState.objects.update_or_create(pk=1, defaults={"last_pass_at": timezone.now()})
    return True


def _lower_this_threads_priority() -> None:
    # Not Linux: the thread keeps the process's priority.
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WRITER_NICENESS)


# What a layer keeps beside ``memory/`` in the install (the knowledge store's ``knowledge/``): taken in
# by the writer once the server has started, after the memory folder's migration.
_start_hooks: dict[str, Callable[[], object]] = {}


def register_install_start_hook(name: str, hook: Callable[[], object]) -> None:
    _start_hooks[name] = hook


def install_start_hooks_run() -> None:
    for name, hook in list(_start_hooks.items()):
        try:
            hook()
        except Exception:
            logger.exception("install folder: taking in %s at start failed", name)
        finally:
            close_old_connections()


def install_folder_watch(stop: threading.Event) -> None:
    """The writer: the first-start migration when one is due, then a pass every ``PASS_SECONDS``
    until ``stop`` is set. Runs in ``serve``'s own process, which answers no request."""
    _lower_this_threads_priority()
    try:
        startup_run()
        if install_migration_needed():
            install_migration_run()
    except Exception:
        logger.exception("install folder: the first-start migration failed; it runs again at the next start")
    finally:
        close_old_connections()
    if startup_run():
        install_start_hooks_run()
    last_full = time.monotonic()
    while not stop.wait(PASS_SECONDS):
        every_file = time.monotonic() - last_full >= FULL_PASS_SECONDS
        try:
            if not startup_run():
                continue
            if install_folder_pass(every_file=every_file) and every_file:
                last_full = time.monotonic()
        except Exception:
            logger.exception("install folder: a pass failed; the next one tries again")
        finally:
            close_old_connections()


def install_watcher_start() -> threading.Event | None:
    """In install mode: start the writer thread; returns the event that stops it (None: standalone)."""
    if install_memory_dir() is None:
        return None
    stop = threading.Event()
    threading.Thread(target=install_folder_watch, args=(stop,), name="install-folder", daemon=True).start()
    return stop


# --- the first-start migration ------------------------------------------------------------------------------


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
    records = _records(name)
    scratch = folder.parent / SCRATCH_DIR / name
    for handler in file_handlers():
        record = records.get(handler.filename)
        if record is not None and record.refused:
            continue
        stamp = _handler_stamp(handler, character)
        if stamp and record is not None:
            FolderFile.objects.filter(pk=record.pk).update(stamp=stamp)
            continue
        exported = scratch / handler.filename
        _clear(exported)
        exported.parent.mkdir(parents=True, exist_ok=True)
        if handler.export(character, exported) is None:
            continue
        sha = file_sha256(exported)
        _clear(exported)
        if record is not None:
            FolderFile.objects.filter(pk=record.pk).update(stamp=stamp, exported_sha256=sha)
        else:  # not in the folder, and nekomem would write it as this
            FolderFile.objects.create(name=name, filename=handler.filename, stamp=stamp, exported_sha256=sha)
    shutil.rmtree(scratch, ignore_errors=True)
    FolderCharacter.objects.update_or_create(name=name, defaults={"stamp": character_stamp(character)})


# --- what the status view and the character's page show ---------------------------------------------------


def install_refusals(*, name: str | None = None) -> list[dict[str, Any]]:
    rows = FolderFile.objects.exclude(refused="").order_by("name", "filename")
    if name is not None:
        rows = rows.filter(name=name)
    return [
        {"character": r.name, "file": r.filename, "reason": r.refused, "since": r.refused_at} for r in rows
    ]


def install_folder_status() -> dict[str, Any] | None:
    """The memory folder's part of the install status (``install.sync.install_status``); None
    when standalone."""
    root = install_root()
    if root is None:
        return None
    state = FolderState.objects.filter(pk=1).first()
    return {
        "root": str(root),
        "migration": {
            "state": state.migration if state else "",
            "done": state.migration_done if state else 0,
            "total": state.migration_total if state else 0,
            "current": state.migration_current if state else "",
            "started_at": state.migration_started_at if state else None,
            "finished_at": state.migration_finished_at if state else None,
        },
        "last_pass_at": state.last_pass_at if state else None,
        "refused": install_refusals(),
        "vanished_folders": sorted(
            FolderCharacter.objects.filter(vanished_at__isnull=False).values_list("name", flat=True)
        ),
    }
