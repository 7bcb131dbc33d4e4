"""Writes of the public knowledge store (reference §1.8), split by subject; import from here.

A user's write waits at most ``WRITE_WAIT_SECONDS`` for the store (``store_lock``), then is refused
with ``knowledge_busy``. An import is a job (``KnowledgeImport``, on the kernel's job mechanism): the
request validates the pack and queues it; a task builds the new version's rows beside the version that
answers, then switches the pack to it in one transaction, under the store lock. A failed or cancelled
import deletes what it built, so the previous version keeps answering.

- ``store``: refusals, the store lock and its transaction, the version every change moves, listeners.
- ``validation``: a pack checked and chunked before any write; the store's capacity.
- ``pack_state``: the user's state of each pack; packs removed, marked broken, the store cleared.
- ``imports``: the import job (submit, build, switch, cancel), an install at once, the minute's tick.
- ``vectors``: the background fill of chunk vectors.
- ``queries``: lookups and tag samples.
"""

from knowledge.services.imports import (
    knowledge_import_cancel,
    knowledge_import_discard,
    knowledge_import_run,
    knowledge_import_submit,
    knowledge_pack_install,
    knowledge_tick,
)
from knowledge.services.pack_state import (
    PackState,
    knowledge_enabled_set,
    knowledge_entry_disabled_set,
    knowledge_pack_auto_context_set,
    knowledge_pack_local_embedding_set,
    knowledge_pack_mark_broken,
    knowledge_pack_material_type_set,
    knowledge_pack_remove,
    knowledge_store_clear,
)
from knowledge.services.queries import QUERY_BUDGET_DEFAULT, knowledge_query
from knowledge.services.store import (
    KnowledgeRefused,
    index_refresh_deferred,
    register_knowledge_change_listener,
    unregister_knowledge_change_listener,
)
from knowledge.services.validation import PreparedPack, capacity_check, pack_prepare
from knowledge.services.vectors import knowledge_vectors_fill, knowledge_vectors_fill_until_done

__all__ = [
    "QUERY_BUDGET_DEFAULT",
    "KnowledgeRefused",
    "PackState",
    "PreparedPack",
    "capacity_check",
    "index_refresh_deferred",
    "knowledge_enabled_set",
    "knowledge_entry_disabled_set",
    "knowledge_import_cancel",
    "knowledge_import_discard",
    "knowledge_import_run",
    "knowledge_import_submit",
    "knowledge_pack_auto_context_set",
    "knowledge_pack_install",
    "knowledge_pack_local_embedding_set",
    "knowledge_pack_mark_broken",
    "knowledge_pack_material_type_set",
    "knowledge_pack_remove",
    "knowledge_query",
    "knowledge_store_clear",
    "knowledge_tick",
    "knowledge_vectors_fill",
    "knowledge_vectors_fill_until_done",
    "pack_prepare",
    "register_knowledge_change_listener",
    "unregister_knowledge_change_listener",
]
