"""django-q2 entry points of recall: the embedding backfill schedule."""

from __future__ import annotations

from nekomem.embeddings import get_embedder
from recall.backfill import characters_needing_vectors, embedding_backfill

TICK_LIMIT = 4000  # facts per character per tick, so one big import does not hold a worker for long


def embedding_backfill_tick() -> int:
    """Embed missing vectors for every character that has some; returns how many were embedded."""
    embedder = get_embedder()
    if embedder is None:
        return 0
    return sum(
        embedding_backfill(character_id=cid, limit=TICK_LIMIT).embedded
        for cid in characters_needing_vectors(model_id=embedder.model_id)
    )
