"""Per-process cache of recall indexes, one per character, kept up to date by the memory-change log.

Every write to recallable memory bumps ``Character.memory_version`` and logs the rows it touched
(``character_memory_changed``). A request compares the version it read with the one its cached index
reflects; when they differ it reads the log after the index's version and applies just those rows
(appends, edits, deletes, new vectors), so a change costs a query the rows that changed, whichever
process wrote it. Only a change without detail (an import) or a pruned log makes a request rebuild.
Tombstones and appended rows accumulate; past ``COMPACT_FRACTION`` of the index a rebuild runs on a
background thread while the old index keeps serving, then catches up with the log and takes its place.

Split by subject: ``entries`` (the cache and its counters), ``cache`` (a request's index), ``catch_up``
(the change log and the raw log), ``saved`` (snapshots, builds, compaction), ``fill`` (deferred
vectors, off the request) and ``warm_up`` (what runs off the request: a start, an import, a backfill).
"""

from recall.index_cache.cache import _builds, recall_index
from recall.index_cache.entries import (
    RecallIndexBuilding,
    _build_locks,
    _cache,
    _lock,
    clear,
    counters,
    usage,
)
from recall.index_cache.fill import _give_way, _vector_filler, answering
from recall.index_cache.warm_up import (
    character_forget,
    recall_forget_apply,
    recall_index_refresh,
    recall_indexes_build,
    recall_indexes_load_saved,
    recall_indexes_prepare,
    recall_indexes_save_vectors,
    recall_indexes_warm_up,
)

__all__ = [
    "RecallIndexBuilding",
    "_build_locks",
    "_builds",
    "_cache",
    "_give_way",
    "_lock",
    "_vector_filler",
    "answering",
    "character_forget",
    "clear",
    "counters",
    "recall_forget_apply",
    "recall_index",
    "recall_index_refresh",
    "recall_indexes_build",
    "recall_indexes_load_saved",
    "recall_indexes_prepare",
    "recall_indexes_save_vectors",
    "recall_indexes_warm_up",
    "usage",
]
