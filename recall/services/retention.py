"""Retention of what recall keeps beside the memory (issue 35): nothing here grows without bound.

- Vectors of archived facts are cleared (recall reads archived facts by BM25 only); vectors of deleted
  rows go with their rows, and raw-turn vectors once extraction covers their turn (the backfill tick).
- Saved indexes (``RECALL_SNAPSHOT_DIR``) of characters that no longer exist are deleted, and every
  saved index but a character's newest once it is a day old.
"""

from __future__ import annotations

from dataclasses import dataclass

from facts.services import fact_vectors_drop_archived
from nekomem.characters.models import Character
from recall.snapshots import snapshots_sweep


@dataclass(frozen=True)
class RecallRetentionReport:
    fact_vectors: int = 0
    snapshots: int = 0


def recall_retention() -> RecallRetentionReport:
    """The daily recall-retention schedule's tick."""
    live = set(Character.objects.values_list("pk", flat=True))
    return RecallRetentionReport(
        fact_vectors=fact_vectors_drop_archived(), snapshots=snapshots_sweep(live_character_ids=live)
    )
