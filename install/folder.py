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

The kernel knows no layer: the files are the portability registry's ``FileHandler``s. Here: one pass
and the writer thread, the start hooks, and what the status shows; the pieces are ``records`` (the
fingerprints), ``take_in``, ``writing`` and ``migration``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import close_old_connections
from django.utils import timezone

from install import install_memory_dir, install_root
from install.migration import install_migration_needed, install_migration_run
from install.models import FolderCharacter, FolderFile, FolderState
from install.take_in import install_folder_reread
from install.writing import folder_write_views
from nekomem.runtime.startup import startup_run
from nekomem.runtime.state import current_block

logger = logging.getLogger(__name__)

# How often the folder is looked at: an edit or a change reaches the other side within this (plus the
# time the write itself takes), well inside the 10 s the original's browser and cloud save allow.
PASS_SECONDS = 2.0
# Every so often every character's files are compared whatever its change stamp says, so a change
# that moves none of the stamp's counters still reaches its file.
FULL_PASS_SECONDS = 60.0
# The background writer yields the CPU to the chat's requests.
WRITER_NICENESS = 10


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
