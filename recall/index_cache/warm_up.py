"""Indexes prepared off the request: before a worker serves and after it starts, after an import, a
backfill, a turn's vectors, a deletion."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor

from nekomem.embeddings import VectorSpace, get_embedder, vector_space
from nekomem.journal.broker import task_enqueue
from nekomem.language.tokens import tokenizers_warm_up
from recall.index_cache.cache import recall_index
from recall.index_cache.catch_up import _raw_turns_sync
from recall.index_cache.entries import _build_lock, _cache, _Entry, _lock, _store
from recall.index_cache.fill import _fill_deferred_vectors, _vector_filler
from recall.index_cache.saved import _load, _save
from recall.selectors import RecallCharacter, recall_characters, recent_recall_characters
from recall.snapshots import BUILDING_CLAIM_SECONDS, build_claim_drop, build_claim_write, snapshots_remove

logger = logging.getLogger(__name__)

WARM_CHARACTERS = 4  # the most recently active characters whose index a starting worker loads
# Saved indexes a worker loads before it serves, at most this long in all (one at 100k rows: ~0.2 s).
SAVED_LOAD_BUDGET_SECONDS = 3.0


def recall_indexes_load_saved() -> int:
    """Before a worker serves: the tokenisers' dictionaries and the saved indexes of the most recently
    active characters, caught up with the log. Nothing is built here (a build runs in the background
    warm-up); returns how many indexes were loaded."""
    started = time.monotonic()
    tokenizers_warm_up()
    space = vector_space()
    loaded = 0
    for character in recent_recall_characters(limit=WARM_CHARACTERS):
        if time.monotonic() - started > SAVED_LOAD_BUDGET_SECONDS:
            break
        with _build_lock(character.pk):
            entry = _load(character_id=character.pk, stop_names=tuple(character.stop_names), space=space)
            if entry is None:
                continue
            with entry.lock:
                _raw_turns_sync(entry, character_id=character.pk, space=space)
            _store(character.pk, entry)
            loaded += 1
    return loaded


def recall_index_refresh(*, character_id: int) -> None:
    """Bring this process's index of the character, if it holds one, up to date now, its new vectors
    filled in here rather than by the filler: the turn embedder's vectors are in it before the next
    query comes. Other processes take them at their next query (the change log)."""
    with _lock:
        entry = _cache.get(character_id)
    if entry is None:
        return
    characters = recall_characters(ids=[character_id])
    if not characters:
        return
    character = characters[0]
    space = vector_space()
    with _vector_filler.holding(entry, character_id=character_id, space=space):
        recall_index(
            character_id=character_id,
            stop_names=character.stop_names,
            space=space,
            version=character.memory_version,
            covered=character.raw_covered,
            raw_written=character.raw_written,
            patient=True,
        )
        with _lock:
            current = _cache.get(character_id)
        if current is entry and entry.index.deferred_vectors:
            _fill_deferred_vectors(entry=entry, character_id=character_id, space=space, patient=False)


PREPARE_TASK = "recall.tasks.recall_indexes_prepare_task"


def recall_indexes_prepare(character_ids: list[int]) -> None:
    """After an import (its hook): each character's index built and saved off the import, by the task
    cluster (``recall_indexes_build``), so the import returns once its rows are stored (a 100k import:
    half its time was this build). The build is claimed first: a server's query meanwhile waits for the
    saved file rather than building the same index beside it, and answers from the rows that hold the
    query's words (``recall.interim``), never "nothing", until the index is there."""
    if not character_ids:
        return
    for character_id in character_ids:
        build_claim_write(character_id=character_id, queued=True)
    try:
        task_enqueue(
            PREPARE_TASK,
            sorted(character_ids),
            task_name=f"recall-index-{min(character_ids)}",
            group="recall-index",
            timeout=int(
                BUILDING_CLAIM_SECONDS
            ),  # a 100k build on a loaded machine outlasts the default 300 s
        )
    except Exception:
        # Nothing lost: the first query of each character builds its index (and saves it).
        logger.exception("recall index build not enqueued after an import characters=%s", character_ids)
        for character_id in character_ids:
            build_claim_drop(character_id=character_id)


def recall_indexes_build(character_ids: list[int]) -> None:
    """Each character's index brought up to date here (loaded and caught up with the import's logged
    rows, or built) and saved, so the server's first query after even a large import loads it (~0.2 s
    at 100k rows) or applies the few rows the import wrote, instead of building."""
    space = vector_space()
    for character in recall_characters(ids=character_ids):
        build_claim_write(character_id=character.pk)
        try:
            entry = _brought_up(character, space=space)
            if entry is not None and entry.index.changed_rows != entry.saved_changes:
                with entry.lock:
                    _save(entry, character_id=character.pk)  # caught up with rows the saved file lacks
        finally:
            build_claim_drop(character_id=character.pk)


def recall_indexes_save_vectors(character_ids: list[int]) -> int:
    """After the backfill embedded many rows of these characters (an import's): each one's saved index
    completed with the vectors and saved again, here (a task worker, off every request). A worker that
    loads it then (a start, an eviction) has them without reading them: filling costs ~0.3 ms a vector
    on a loaded machine (20 000: 6 s), a rebuild twice that, a load ~0.2 s at 100k rows. An index this
    process did not hold is let go once saved. Returns how many were saved."""
    if not character_ids:
        return 0
    space = vector_space()
    saved = 0
    for character in recall_characters(ids=character_ids):
        with _lock:
            held = character.pk in _cache
        entry = None if held else _saved_with_new_vectors(character, space=space)
        entry = entry or _brought_up(character, space=space)
        if entry is None:
            continue
        if entry.index.deferred_vectors:
            with _vector_filler.holding(entry, character_id=character.pk, space=space):
                _fill_deferred_vectors(entry=entry, character_id=character.pk, space=space, patient=False)
        index = entry.index
        if (index.filled_vectors, index.changed_rows) != (entry.saved_fills, entry.saved_changes):
            with entry.lock:
                _save(entry, character_id=character.pk)
            saved += 1
        if not held:
            with _lock:
                if _cache.get(character.pk) is entry:
                    del _cache[character.pk]
    return saved


def _saved_with_new_vectors(character: RecallCharacter, *, space: VectorSpace | None) -> _Entry | None:
    """The saved index caught up however many vectors the backfill wrote since it was saved: a tick
    that embedded more than a catch-up takes (20 000 raw turns after an import's facts) made it read
    as "rebuild", so it was never saved again, and every start declined it and rebuilt on a request.
    None when there is no file or rows changed beyond a catch-up."""
    with _build_lock(character.pk):
        entry = _load(
            character_id=character.pk, stop_names=tuple(character.stop_names), space=space, any_vectors=True
        )
        if entry is not None:
            _store(character.pk, entry)
        return entry


def recall_indexes_warm_up() -> None:
    """Load the model and bring the indexes of the most recently active characters up to date (those
    without a saved index are built here), so a restarted worker's queries find them ready. The
    indexes need only the model's identity: a query that comes before the model answers by BM25."""
    characters = recent_recall_characters(limit=WARM_CHARACTERS)
    with ThreadPoolExecutor(1, thread_name_prefix="warm-up-model") as model:
        loading = model.submit(get_embedder)
        space = vector_space()
        for character in characters:
            _brought_up(character, space=space)
        loading.result()


def character_forget(character_id: int) -> None:
    """The character was renamed or deleted: drop its index here and the ones saved on disk."""
    with _lock:
        _cache.pop(character_id, None)
    snapshots_remove(character_id=character_id)


def recall_forget_apply(character_id: int) -> dict[str, int]:
    """After a deletion: this process's index applies it (its rows tombstoned and their text blanked)
    before the delete returns, and the saved snapshots, which may hold the text, are dropped; the index
    just brought up to date is saved in their place. Other workers apply the change at their next query
    (the change log), and drop a snapshot older than the deletion instead of loading it."""
    characters = recall_characters(ids=[character_id])
    if not characters:  # the whole character went
        with _lock:
            held = _cache.pop(character_id, None) is not None
        return {"recall_indexes": int(held), "index_snapshots": snapshots_remove(character_id=character_id)}
    character = characters[0]
    with _lock:
        held = character_id in _cache
    if held:
        recall_index(
            character_id=character_id,
            stop_names=character.stop_names,
            space=vector_space(),
            version=character.memory_version,
            patient=True,
        )
    dropped = snapshots_remove(character_id=character_id)
    with _lock:
        entry = _cache.get(character_id)
    if entry is not None and dropped and entry.version >= character.memory_version:
        with entry.lock:
            _save(entry, character_id=character_id)
    return {"recall_indexes": int(held), "index_snapshots": dropped}


def _brought_up(character: RecallCharacter, *, space: VectorSpace | None) -> _Entry | None:
    """The character's index brought up to date in this process (loaded, caught up or built, waiting
    for a build in flight), and its cache entry (None when the cache let it go meanwhile)."""
    recall_index(
        character_id=character.pk,
        stop_names=character.stop_names,
        space=space,
        version=character.memory_version,
        patient=True,
    )
    with _lock:
        return _cache.get(character.pk)
