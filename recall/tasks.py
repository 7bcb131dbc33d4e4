"""django-q2 entry points of recall: the embedding backfill schedule."""

from __future__ import annotations

import time

from django.conf import settings

from nekomem.embeddings import configured_profile, get_embedder
from nekomem.embeddings.profiles import get_profile
from recall.backfill import characters_needing_vectors, embedding_backfill

TICK_LIMIT = 2000  # facts per character per round: characters take turns within a tick
TICK_SECONDS = 50.0  # a tick keeps embedding until this long has passed (the schedule runs every minute)


def embedding_backfill_tick(*, budget: float = TICK_SECONDS) -> int:
    """Embed missing vectors for every character that has some, round after round until none is left
    or the tick's time is up (a large import then takes the CPU the machine spares, not one batch a
    minute); returns how many were embedded."""
    if not settings.EMBEDDINGS_ENABLED:
        return 0
    model_id = get_profile(configured_profile()).model_id
    # Asked by model id first, so an idle tick never loads the model (~1 s and ~120 MB per task worker).
    waiting = characters_needing_vectors(model_id=model_id)
    if not waiting or get_embedder() is None:
        return 0
    deadline = time.monotonic() + budget
    embedded = 0
    while waiting and time.monotonic() < deadline:
        done = 0
        for character_id in waiting:
            done += embedding_backfill(character_id=character_id, limit=TICK_LIMIT).embedded
        embedded += done
        waiting = characters_needing_vectors(model_id=model_id) if done else []
    return embedded
