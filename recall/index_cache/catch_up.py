"""Bringing an entry up to date: the memory-change log after its version, and the raw log's turns."""

from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import replace
from datetime import datetime

import numpy as np
from django.conf import settings

from nekomem.characters.selectors import memory_changes_since
from nekomem.embeddings import VectorSpace
from recall.engine import Candidate, RecallIndex
from recall.engine.vectors import unit_rows
from recall.index_cache.entries import MAX_DELTA_ROWS, _Entry, counters
from recall.index_cache.fill import _current_rows, _vector_filler
from recall.selectors import (
    NOT_READ,
    RAW_TURN_POOL,
    RECALL_POOLS,
    NotRead,
    character_forgotten_version,
    raw_turn_candidates,
    raw_turns_covered_through,
)
from recall.snapshots import snapshots_remove

logger = logging.getLogger(__name__)


def _raw_turns_sync(
    entry: _Entry,
    *,
    character_id: int,
    space: VectorSpace | None,
    covered: datetime | NotRead | None = NOT_READ,
    written: int | None = None,
) -> bool:
    """Add the raw log's new turns and drop those extraction has covered since (raw turns are not in the
    change log: they arrive on every turn, and the cursor moving is their only other change). False
    when the cursor went back. ``covered``: the cursor as the caller read it (read here if not);
    ``written``: the raw-log row count read with it, which spares the read when nothing was written
    since."""
    if entry.raw_live is None:  # just built or loaded: what it holds
        entry.raw_live = deque(sorted((when, key) for key, when in entry.index.pool_rows(RAW_TURN_POOL)))
        entry.raw_after = entry.raw_live[-1] if entry.raw_live else None
        if entry.raw_built is not None:
            entry.raw_covered, entry.raw_written = entry.raw_built.covered, entry.raw_built.written
    if isinstance(covered, NotRead):
        covered = raw_turns_covered_through(character_id=character_id)
    if entry.raw_covered is not None and (covered is None or covered < entry.raw_covered):
        return False
    removed: list[int] = []
    while entry.raw_live and covered is not None and entry.raw_live[0][0] <= covered:
        removed.append(entry.raw_live.popleft()[1])
    after = entry.raw_after
    if after is not None and covered is not None and after[0] < covered:
        after = (covered, 2**62)  # everything up to the cursor is covered anyway
    # The index has every row up to the count it keeps (``Character.raw_rows_written``, counted in the
    # transaction that writes the rows): the same count, or an older one read before another request's
    # read, means no new row, and no read.
    unread = written is None or entry.raw_written is None or written > entry.raw_written
    new: list[Candidate] = []
    if unread:
        new = list(raw_turn_candidates(character_id=character_id, space=space, after=after, covered=covered))
        counters["raw_turn_reads"] += 1
    if removed or new:
        entry.index.apply(pool=RAW_TURN_POOL, upserts=new, removed=removed)
        counters["raw_turn_rows"] += len(removed) + len(new)
    for c in new:
        assert c.created_at is not None and c.key is not None
        entry.raw_live.append((c.created_at, c.key))
    if entry.raw_live:
        entry.raw_after = entry.raw_live[-1]
    entry.raw_covered = covered
    if unread:
        entry.raw_written = written  # last: a failed read or apply leaves the count to read again
    return True


def _catch_up(
    entry: _Entry, *, character_id: int, space: VectorSpace | None, any_vectors: bool = False
) -> bool:
    """Apply the logged changes after the entry's version; False when only a rebuild is safe.

    Changed rows are applied here; vectors alone (the backfill's batches) are only noted, and a
    thread fills them in, off the request: a row without its vector yet is just not in the cosine
    pool for a moment, as it was before the vector was written. ``any_vectors``: however many
    vectors came since (the task worker that saves an index again after a backfill, off every
    request), only the changed rows count towards a rebuild.
    """
    started = time.monotonic()
    changes = memory_changes_since(character_id=character_id, version=entry.version)
    if not changes.complete:
        return False
    # Rows and vectors of a pool recall does not index (persona entries, reference §4.1) change nothing
    # here: the index holds none of them. Persona writes come with most sessions (promotion, mentions,
    # refine); read as "rebuild", each made the character's next query build its whole index on the
    # request (bench/years.py: that first query's p95 grew with the pools, x1.75 in two years).
    rows = {pool: keys for pool, keys in changes.rows.items() if pool in RECALL_POOLS}
    vectors = {pool: keys for pool, keys in changes.vectors.items() if pool in RECALL_POOLS}
    changed_rows = sum(len(keys) for keys in rows.values())
    size = changed_rows + sum(len(keys) for keys in vectors.values())
    if (changed_rows if any_vectors else size) > MAX_DELTA_ROWS:
        return False
    defer = settings.RECALL_BUILD_WAIT_SECONDS is not None
    removed = 0
    for pool, reader in RECALL_POOLS.items():
        changed = rows.get(pool, set())
        vector_keys = vectors.get(pool, set()) - changed
        if vector_keys and defer:
            entry.index.defer_vectors(pool, vector_keys)
            vector_keys = set()
        if not changed and not vector_keys:
            continue
        current = _current_rows(
            reader, character_id=character_id, space=space, rows=changed, vectors=vector_keys
        )
        upserts = current["upserts"]
        current["upserts"] = [c for c in upserts if not _already_held(entry.index, c)]
        counters["unchanged_rows"] += len(upserts) - len(current["upserts"])
        removed += len(current["removed"])
        entry.index.apply(pool=pool, **current)
    entry.version = changes.through
    if removed:
        _drop_forgotten_snapshots(entry, character_id=character_id)
    counters["deltas"] += 1
    counters["delta_rows"] += size
    logger.info(
        "recall index caught up character=%s rows=%d version=%d ms=%.1f",
        character_id,
        size,
        entry.version,
        (time.monotonic() - started) * 1000,
    )
    if entry.index.deferred_vectors and entry.served:
        # Before its first answer the entry fills them itself (``_vectors_complete``): a batch the
        # filler had taken would be missing from that answer.
        _vector_filler.request(entry, character_id=character_id, space=space)
    return True


def _already_held(index: RecallIndex, candidate: Candidate) -> bool:
    """The index's live row of ``candidate`` already says all of it (a logged change of a field recall
    does not read: a reflection's evidence or status between pending and confirmed). Replacing it
    cost a tombstone (its text block recompressed), a re-tokenised row and a step towards compaction,
    on the character's next query (bench/years.py: 1-3 of a session's 12-29 logged rows; the others
    change what recall reads). Ties rank by key, not by row, so keeping the row answers exactly as
    replacing it would."""
    row = index.row_of(candidate.pool, candidate.key) if candidate.key is not None else None
    if row is None or bool(index.has_vector[row]) != (candidate.vector is not None):
        return False
    if candidate.vector is not None:
        # A vector that moved by more than float32 rounding (the build keeps it as read, a catch-up as
        # normalised here) is a new vector. Int8 vectors (a large pool, no float matrix) are replaced.
        matrix = index.matrix
        if matrix is None:
            return False
        unit = unit_rows([candidate.vector], matrix.shape[1])[0][0]
        if not np.allclose(matrix[row], unit, rtol=0.0, atol=1e-6):
            return False
    return index.rows.candidate(row) == replace(candidate, vector=None)


def _drop_forgotten_snapshots(entry: _Entry, *, character_id: int) -> None:
    """Rows went: if one was forgotten (a deletion by any process, ``Character.forgotten_version``)
    after the snapshot this process saved or loaded, that file may hold its text, so it goes now
    rather than at the next save (a server whose var/ the deleting process does not share)."""
    saved = entry.saved_version
    if saved is None or saved >= (character_forgotten_version(character_id=character_id) or 0):
        return
    snapshots_remove(character_id=character_id)
    entry.saved_version = None
    counters["snapshots_forgotten"] += 1
