"""Recall's services: hybrid recall (``query``, reads only) and the raw turns' vector cache."""

from recall.services.query import RecallRequest, hit_row, recall_failed_body, recall_query
from recall.services.raw_vectors import raw_turn_vectors_prune, raw_turn_vectors_write
from recall.services.scoped import (
    ForgetEpochScope,
    Forgotten,
    scoped_context_render,
    scoped_forget,
    scoped_mentions_record,
    subject_record_touch,
)

__all__ = [
    "ForgetEpochScope",
    "Forgotten",
    "RecallRequest",
    "hit_row",
    "raw_turn_vectors_prune",
    "raw_turn_vectors_write",
    "recall_failed_body",
    "recall_query",
    "scoped_context_render",
    "scoped_forget",
    "scoped_mentions_record",
    "subject_record_touch",
]
