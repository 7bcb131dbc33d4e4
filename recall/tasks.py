"""django-q2 entry points of recall: the embedding backfill schedule."""

from __future__ import annotations

from django.conf import settings

from nekomem.embeddings import configured_profile, get_embedder
from nekomem.embeddings.profiles import get_profile
from recall.backfill import characters_needing_vectors, embedding_backfill

TICK_LIMIT = 4000  # facts per character per tick, so one big import does not hold a worker for long


def embedding_backfill_tick() -> int:
    """Embed missing vectors for every character that has some; returns how many were embedded."""
    if not settings.EMBEDDINGS_ENABLED:
        return 0
    # Asked by model id first, so an idle tick never loads the model (~1 s and ~120 MB per task worker).
    waiting = characters_needing_vectors(model_id=get_profile(configured_profile()).model_id)
    if not waiting or get_embedder() is None:
        return 0
    return sum(embedding_backfill(character_id=cid, limit=TICK_LIMIT).embedded for cid in waiting)
