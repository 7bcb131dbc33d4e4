"""The install's config files, read when they change (a stat per check) and written atomically.

The main server writes ``characters.json`` and ``core_config.json`` while we read them, so a read can
see half a file: a file that does not parse keeps the last good copy, and the status view says so.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nekomem.errors import Conflict


class ConfigFileError(Conflict):
    """The file is not the JSON object it should be (HTTP 409 when a write would overwrite it)."""


@dataclass(frozen=True)
class FileState:
    """What a watched file gave at its last read."""

    path: Path
    data: dict[str, Any] | None  # the last good copy; None before any good read (or the file is missing)
    generation: int  # counts good reads that changed the data
    error: str  # why the current file was not taken; empty when it was
    read_at: datetime | None  # when the last good copy was read
    missing: bool


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class WatchedJsonFile:
    """A JSON object file re-read only when its mtime, size or inode changes.

    One stat per ``state()`` call: cheap enough to run before every request.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._key: tuple[int, int, int] | bool | None = False  # False: never looked
        self._state = FileState(path, None, 0, "", None, missing=True)

    def state(self) -> FileState:
        key = _stat_key(self.path)
        if key == self._key:
            return self._state
        with self._lock:
            if key != self._key:
                self._state = self._read(key)
                self._key = key
            return self._state

    def forget(self) -> None:
        with self._lock:
            self._key = False

    def _read(self, key: tuple[int, int, int] | None) -> FileState:
        old = self._state
        if key is None:
            return FileState(self.path, old.data, old.generation, "", old.read_at, missing=True)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ConfigFileError("the top level is not a JSON object")
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, ConfigFileError) as exc:
            # Half-written or broken: keep serving the last good copy until a good one appears.
            return FileState(
                self.path, old.data, old.generation, f"{type(exc).__name__}: {exc}", old.read_at, False
            )
        generation = old.generation if data == old.data else old.generation + 1
        return FileState(self.path, data, generation, "", datetime.now(UTC), missing=False)


def write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write a temp file beside ``path`` and replace it: a reader sees the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=2)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
