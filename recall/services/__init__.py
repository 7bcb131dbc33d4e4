"""Recall's services: hybrid recall (``query``, reads only) and the raw turns' vector cache."""

from recall.services.query import RecallRequest, hit_row, recall_failed_body, recall_query
from recall.services.raw_vectors import raw_turn_vectors_prune, raw_turn_vectors_write, raw_turn_windows_write
from recall.services.retention import RecallRetentionReport, recall_retention

__all__ = [
    "RecallRequest",
    "RecallRetentionReport",
    "hit_row",
    "raw_turn_vectors_prune",
    "raw_turn_vectors_write",
    "raw_turn_windows_write",
    "recall_failed_body",
    "recall_query",
    "recall_retention",
]
