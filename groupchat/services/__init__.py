"""Group chat's services: subjects, scoped context and forgetting (``scoped``), the keyed-write protocol of
``scoped_history`` (``history``), and identity administration that reaches the layers' rows (``identity``)."""

from groupchat.services.history import (
    HistoryExtractionFailed,
    HistoryRequest,
    HistorySegment,
    WriteKey,
    scoped_history_write,
)
from groupchat.services.identity import (
    EntityForgotten,
    identity_entity_forget,
    identity_reconcile_from_facts,
    identity_stranded_rows,
)
from groupchat.services.scoped import (
    ForgetEpochScope,
    Forgotten,
    KeyReused,
    scoped_context_render,
    scoped_facts_write,
    scoped_forget,
    scoped_mentions_record,
    scoped_write_is_stale,
    scoped_write_key_begin,
    scoped_write_key_finish,
    scoped_write_key_journal,
    scoped_write_keys_prune,
    subject_forget_generation,
    subject_record_touch,
)

__all__ = [
    "EntityForgotten",
    "ForgetEpochScope",
    "Forgotten",
    "HistoryExtractionFailed",
    "HistoryRequest",
    "HistorySegment",
    "KeyReused",
    "WriteKey",
    "identity_entity_forget",
    "identity_reconcile_from_facts",
    "identity_stranded_rows",
    "scoped_context_render",
    "scoped_facts_write",
    "scoped_forget",
    "scoped_history_write",
    "scoped_mentions_record",
    "scoped_write_is_stale",
    "scoped_write_key_begin",
    "scoped_write_key_finish",
    "scoped_write_key_journal",
    "scoped_write_keys_prune",
    "subject_forget_generation",
    "subject_record_touch",
]
