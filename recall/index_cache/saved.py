"""Indexes on disk: loaded and caught up, built and saved, compacted and saved again in the background."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from django.db import close_old_connections, connection

from nekomem.embeddings import VectorSpace, trim_heap
from recall.engine import RecallIndex
from recall.index_cache.catch_up import _catch_up
from recall.index_cache.entries import (
    COMPACT_FRACTION,
    COMPACT_MIN_ROWS,
    _cache,
    _Entry,
    _lock,
    _store,
    counters,
)
from recall.index_cache.fill import _give_way
from recall.selectors import (
    character_forgotten_version,
    character_incarnation,
    character_memory_version,
    raw_log_marks,
    recall_pools,
)
from recall.snapshots import snapshot_path, snapshot_read, snapshot_write

logger = logging.getLogger(__name__)


def _snapshot_path(*, character_id: int, model_id: str | None, stop_names: tuple[str, ...]) -> Path | None:
    incarnation = character_incarnation(character_id=character_id)
    if incarnation is None:
        return None
    return snapshot_path(
        character_id=character_id, incarnation=incarnation, model_id=model_id, stop_names=stop_names
    )


def _load(
    *, character_id: int, stop_names: tuple[str, ...], space: VectorSpace | None, any_vectors: bool = False
) -> _Entry | None:
    """The saved index caught up with the log, or None (no file, or a rebuild is needed anyway);
    ``any_vectors`` as ``_catch_up`` takes it."""
    model_id = space.model_id if space is not None else None
    path = _snapshot_path(character_id=character_id, model_id=model_id, stop_names=stop_names)
    saved = snapshot_read(path) if path is not None else None
    if saved is None:
        return None
    version, index = saved
    if version < (character_forgotten_version(character_id=character_id) or 0):
        # Saved before a deletion (by a process that was saving while it happened): it may hold the
        # forgotten text, so it goes rather than waits for the next save to replace it.
        assert path is not None
        path.unlink(missing_ok=True)
        counters["snapshots_forgotten"] += 1
        return None
    entry = _Entry(version=version, model_id=model_id, stop_names=stop_names, index=index)
    entry.saved_fills, entry.saved_changes = index.filled_vectors, index.changed_rows
    entry.saved_version = version
    with entry.lock:
        if not _catch_up(entry, character_id=character_id, space=space, any_vectors=any_vectors):
            return None
    counters["snapshot_loads"] += 1
    logger.info(
        "recall index loaded character=%s rows=%d version=%d", character_id, len(index), entry.version
    )
    return entry


def _build(
    *, character_id: int, stop_names: tuple[str, ...], space: VectorSpace | None, version: int, why: str
) -> _Entry:
    started = time.monotonic()
    marks = raw_log_marks(character_id=character_id)  # before the pools: never newer than they are
    index = RecallIndex(
        recall_pools(character_id=character_id, space=space),
        stop_names=stop_names,
        dim=space.dim if space is not None else None,
    )
    trim_heap()  # the build's temporaries, or a large index keeps them resident
    counters["full_builds"] += 1
    counters[f"full_builds_{why}"] += 1
    logger.info(
        "recall index built character=%s rows=%d version=%d why=%s ms=%d mb=%.1f",
        character_id,
        len(index),
        version,
        why,
        (time.monotonic() - started) * 1000,
        index.nbytes / 1e6,
    )
    model_id = space.model_id if space is not None else None
    entry = _Entry(version=version, model_id=model_id, stop_names=stop_names, index=index)
    entry.raw_built = marks
    _save(entry, character_id=character_id)
    return entry


def _save(entry: _Entry, *, character_id: int) -> None:
    path = _snapshot_path(character_id=character_id, model_id=entry.model_id, stop_names=entry.stop_names)
    if path is not None:
        version = entry.version  # read before the index is taken: never newer than what it holds
        entry.saved_fills = entry.index.filled_vectors
        entry.saved_changes = entry.index.changed_rows
        written = snapshot_write(path, version=version, index=entry.index)
        if written:
            entry.saved_version = version
        if written and version < (character_forgotten_version(character_id=character_id) or 0):
            # A deletion committed while this index (from before it) was being saved: drop the file.
            path.unlink(missing_ok=True)
            counters["snapshots_forgotten"] += 1


def _maybe_compact(entry: _Entry, *, character_id: int, space: VectorSpace | None) -> None:
    """Rebuild on a background thread once enough rows changed; the old index serves meanwhile.
    Short of that, save it again once enough changed since the last save (the backfill's vectors), so
    a restart does not replay them."""
    index = entry.index
    unsaved = index.filled_vectors - entry.saved_fills + index.changed_rows - entry.saved_changes
    if not entry.saving and unsaved >= max(COMPACT_MIN_ROWS, COMPACT_FRACTION * len(index)):
        entry.saving = True
        threading.Thread(
            target=_save_in_background,
            kwargs={"entry": entry, "character_id": character_id},
            name=f"recall-save-{character_id}",
            daemon=True,
        ).start()
    if entry.compacting or index.changed_rows < max(COMPACT_MIN_ROWS, COMPACT_FRACTION * len(index)):
        return
    entry.compacting = True
    threading.Thread(
        target=_compact,
        kwargs={"character_id": character_id, "space": space, "stop_names": entry.stop_names},
        name=f"recall-compact-{character_id}",
        daemon=True,
    ).start()


def _compact(*, character_id: int, space: VectorSpace | None, stop_names: tuple[str, ...]) -> None:
    try:
        version = character_memory_version(character_id=character_id)
        if version is None:
            return
        fresh = _build(
            character_id=character_id,
            stop_names=stop_names,
            space=space,
            version=version,
            why="compaction",
        )
        fresh.served = True  # it takes the place of an entry that answers: the filler brings its vectors
        with fresh.lock:
            _catch_up(fresh, character_id=character_id, space=space)
        # Its version says what it holds, so even one a little behind the one it replaces is correct:
        # the next request catches it up.
        _store(character_id, fresh, replace=True)
    except Exception:
        logger.exception("recall index compaction failed character=%s", character_id)
        with _lock:
            entry = _cache.get(character_id)
            if entry is not None:
                entry.compacting = False
    finally:
        close_old_connections()
        connection.close()


def _save_in_background(*, entry: _Entry, character_id: int) -> None:
    try:
        # Started by a query's catch-up: the fork (the index's lock, ~20 ms at 100k rows) waits until
        # that query, and any other in flight, has its answer.
        _give_way()
        _save(entry, character_id=character_id)
    except Exception:
        logger.exception("recall snapshot failed character=%s", character_id)
    finally:
        entry.saving = False
        connection.close()
