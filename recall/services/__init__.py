"""Recall's services: hybrid recall (``query``, reads only), the raw turns' vector cache, and the
group-chat compositions (``scoped``)."""

from recall.services.query import RecallRequest, hit_row, recall_failed_body, recall_query
from recall.services.raw_vectors import raw_turn_vectors_prune, raw_turn_vectors_write, raw_turn_windows_write
from recall.services.retention import RecallRetentionReport, recall_retention
from recall.services.scoped import (
    ForgetEpochScope,
    Forgotten,
    KeyReused,
    scoped_context_render,
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
    "ForgetEpochScope",
    "Forgotten",
    "KeyReused",
    "RecallRequest",
    "RecallRetentionReport",
    "hit_row",
    "raw_turn_vectors_prune",
    "raw_turn_vectors_write",
    "raw_turn_windows_write",
    "recall_failed_body",
    "recall_query",
    "recall_retention",
    "scoped_context_render",
    "scoped_forget",
    "scoped_mentions_record",
    "scoped_write_is_stale",
    "scoped_write_key_begin",
    "scoped_write_key_finish",
    "scoped_write_key_journal",
    "scoped_write_keys_prune",
    "subject_forget_generation",
    "subject_record_touch",
]
