"""Recall indexes on disk: a worker that starts loads its characters' last saved index and catches up
with the memory-change log, instead of rebuilding (46 s at 100k facts).

A snapshot belongs to one database, one character (its primary key and creation time, so a database
recreated under the same name never serves another's index), one vector model and one list of stop
names, and records the memory version it holds. Files are written whole and renamed into place, so a
reader never sees half of one; several processes may write the same file, the last rename wins.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import pickle
import signal
import socket
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection

from recall.engine import RecallIndex

logger = logging.getLogger(__name__)

FORMAT = 7  # bump when the index's layout or its terms (the tokenizers) change: older files are then ignored


def snapshot_path(
    *, character_id: int, incarnation: str, model_id: str | None, stop_names: tuple[str, ...]
) -> Path | None:
    folder = _database_folder()
    if folder is None:
        return None
    what = "\0".join((str(FORMAT), incarnation, model_id or "", *stop_names))
    digest = hashlib.sha256(what.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return folder / f"{character_id}-{digest}.pickle"


def _database_folder() -> Path | None:
    root = getattr(settings, "RECALL_SNAPSHOT_DIR", "")
    if not root:
        return None
    db = connection.settings_dict
    where = "\0".join(str(db.get(k) or "") for k in ("ENGINE", "NAME", "HOST", "PORT"))
    return Path(root) / hashlib.sha256(where.encode()).hexdigest()[:12]


def snapshots_remove(*, character_id: int) -> int:
    """Delete every saved index of the character (renamed: its stop names changed; or deleted)."""
    folder = _database_folder()
    if folder is None:
        return 0
    removed = 0
    for path in folder.glob(f"{character_id}-*.pickle"):
        path.unlink(missing_ok=True)
        removed += 1
    return removed


# A character's older saved indexes (another model, other stop names, an older FORMAT) are never read
# again once a newer one exists; kept this long in case a worker still on the old settings saves one.
SUPERSEDED_KEPT_FOR = 24 * 3600.0
STRAY_TEMPORARY_AFTER = 3600.0  # a ``.tmp`` of a save whose writer died


def snapshots_sweep(*, live_character_ids: set[int], now: float | None = None) -> int:
    """Retention of this database's saved indexes; returns how many files were deleted: those of
    characters that no longer exist (deleted while no process of this host ran the forget hook), every
    one but the newest of each character once a day old, and stray temporaries."""
    folder = _database_folder()
    if folder is None or not folder.is_dir():
        return 0
    now = time.time() if now is None else now
    removed = 0
    newest: dict[int, tuple[float, Path]] = {}
    superseded: list[tuple[float, Path]] = []
    for path in folder.iterdir():
        try:
            modified = path.stat().st_mtime
        except OSError:
            continue  # removed meanwhile
        if path.suffix == ".tmp":
            if now - modified > STRAY_TEMPORARY_AFTER:
                path.unlink(missing_ok=True)
                removed += 1
            continue
        head = path.name.split("-", 1)[0]
        if path.suffix != ".pickle" or not head.isdigit():
            continue  # not ours
        character_id = int(head)
        if character_id not in live_character_ids:
            path.unlink(missing_ok=True)
            removed += 1
            continue
        kept = newest.get(character_id)
        if kept is None or modified > kept[0]:
            if kept is not None:
                superseded.append(kept)
            newest[character_id] = (modified, path)
        else:
            superseded.append((modified, path))
    for modified, path in superseded:
        if now - modified > SUPERSEDED_KEPT_FOR:
            path.unlink(missing_ok=True)
            removed += 1
    return removed


_LENGTH = struct.Struct("<Q")


# A save forks and lets the child write: the fork is the only part under the index's lock (a few ms;
# pickling under it, even with the arrays copied out of band, held queries ~250 ms at 200k rows). The
# child sees the index as it was at the fork whatever the parent changes afterwards (copy-on-write
# pages), which is what a consistent snapshot needs. Where there is no fork, the save copies under the
# lock.
FORK_SAVES = hasattr(os, "fork") and hasattr(os, "waitstatus_to_exitcode")
PR_SET_PDEATHSIG = 1  # prctl(2)


def snapshot_write(path: Path, *, version: int, index: RecallIndex) -> bool:
    """Save ``index`` as holding ``version`` (read before the index was taken: never newer than it).
    Returns whether the file was written."""
    started = time.monotonic()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    except OSError:
        logger.warning("recall snapshot not written path=%s", path)
        return False
    written, held = False, 0.0
    try:
        if FORK_SAVES:
            written, held = _write_in_child(handle, version=version, index=index)
        else:
            written, held = _write_here(handle, version=version, index=index)
        os.close(handle)
        handle = -1
        if written:
            os.replace(temporary, path)
    except OSError:
        written = False
    finally:
        if handle != -1:
            os.close(handle)
        if not written:
            Path(temporary).unlink(missing_ok=True)
    if not written:
        logger.warning("recall snapshot not written path=%s", path)
        return False
    logger.info(
        "recall snapshot written version=%d rows=%d mb=%.1f ms=%d locked_ms=%.1f",
        version,
        len(index),
        path.stat().st_size / 1e6,
        (time.monotonic() - started) * 1000,
        held,
    )
    return True


def _parts(version: int, index: RecallIndex) -> tuple[bytes, list[pickle.PickleBuffer]]:
    buffers: list[pickle.PickleBuffer] = []
    head = pickle.dumps((FORMAT, version, index), protocol=5, buffer_callback=buffers.append)
    return head, buffers


def _write_parts(handle: int, head: bytes, arrays: list[Any]) -> None:
    with os.fdopen(os.dup(handle), "wb") as out:
        out.write(_LENGTH.pack(FORMAT))
        out.write(_LENGTH.pack(len(arrays)))
        for part in (head, *arrays):
            view = memoryview(part).cast("B")
            out.write(_LENGTH.pack(view.nbytes))
            out.write(view)


def _write_here(handle: int, *, version: int, index: RecallIndex) -> tuple[bool, float]:
    started = time.monotonic()
    with index.lock:
        head, buffers = _parts(version, index)
        arrays = [bytes(buffer.raw()) for buffer in buffers]  # later fills must not reach the file
    held = (time.monotonic() - started) * 1000
    _write_parts(handle, head, arrays)
    return True, held


def _write_in_child(handle: int, *, version: int, index: RecallIndex) -> tuple[bool, float]:
    started = time.monotonic()
    with index.lock:
        pid = os.fork()
        if pid == 0:
            _child_write(handle, version=version, index=index)  # never returns
    held = (time.monotonic() - started) * 1000
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0, held


def _child_write(handle: int, *, version: int, index: RecallIndex) -> None:
    """In the forked child: write the file and leave at once, touching nothing the parent owns (no
    database, no logging, no exit handlers)."""
    code = 1
    try:
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        if sys.platform.startswith("linux"):
            # Never outlive the worker that asked (a stop, or a kill -9 of the worker).
            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        head, buffers = _parts(version, index)
        _write_parts(handle, head, [buffer.raw() for buffer in buffers])
        code = 0
    finally:
        os._exit(code)


def snapshot_read(path: Path) -> tuple[int, RecallIndex] | None:
    """(version, index) saved at ``path``, or None (missing, of another format, unreadable)."""
    try:
        with path.open("rb") as source:
            (file_format,) = _LENGTH.unpack(source.read(_LENGTH.size))
            if file_format != FORMAT:
                return None
            (count,) = _LENGTH.unpack(source.read(_LENGTH.size))
            parts = []
            for _ in range(count + 1):
                (length,) = _LENGTH.unpack(source.read(_LENGTH.size))
                part = bytearray(length)  # writable: the loaded arrays take changes in place
                if source.readinto(part) != length:
                    raise EOFError(path)
                parts.append(part)
        # Our own file under our own var directory (unpickling runs code: never load a foreign one).
        loaded = pickle.loads(parts[0], buffers=parts[1:])
    except FileNotFoundError:
        return None
    except Exception:
        logger.warning("recall snapshot unreadable path=%s", path)
        return None
    if not isinstance(loaded, tuple) or len(loaded) != 3 or loaded[0] != FORMAT:
        return None
    _, version, index = loaded
    return (version, index) if isinstance(version, int) and isinstance(index, RecallIndex) else None


# --- build claims: one builder of a character's index across the processes of a host ---------------

# A claim written when a build is handed to the task cluster (an import's) counts this long before the
# task has taken it (the cluster polls every half second; without a cluster the server builds itself).
QUEUED_CLAIM_SECONDS = 30.0
BUILDING_CLAIM_SECONDS = 900.0  # a build past this is taken for dead whatever its process says


def _claim_path(character_id: int) -> Path | None:
    folder = _database_folder()
    return None if folder is None else folder / f"{character_id}.building"


def build_claim_write(*, character_id: int, queued: bool = False) -> None:
    """Say that this process (or, ``queued``, a task about to run) builds and saves the character's
    index now: a server's first query then loads the file once it is saved instead of building the same
    index beside it (two builds of a 100k-row pool on two cores each took twice as long)."""
    path = _claim_path(character_id)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    state = "queued" if queued else "building"
    path.write_text(f"{socket.gethostname()} {os.getpid()} {state}", encoding="utf-8")


def build_claim_drop(*, character_id: int) -> None:
    path = _claim_path(character_id)
    if path is not None:
        path.unlink(missing_ok=True)


def build_claimed(*, character_id: int) -> bool:
    """Whether another live process claimed the character's build (``build_claim_write``)."""
    path = _claim_path(character_id)
    try:
        if path is None:
            return False
        host, pid, state = path.read_text(encoding="utf-8").split()
        age = time.time() - path.stat().st_mtime
    except (OSError, ValueError):
        return False
    if state == "queued":
        return age < QUEUED_CLAIM_SECONDS
    if age >= BUILDING_CLAIM_SECONDS or int(pid) == os.getpid():
        return False
    if host != socket.gethostname():
        return True  # a shared var/ of another host: its age is all there is to judge it by
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False  # the builder died: its claim is stale
    except PermissionError:
        return True
    return True
