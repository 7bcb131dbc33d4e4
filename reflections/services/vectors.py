"""Writes of the reflections' vector cache (filled by recall's embedding backfill)."""

from __future__ import annotations

from reflections.models import RECALL_POOL, Reflection
from reflections.vector_cache import VectorRow, vector_cache_write


def reflection_vectors_write(*, character_id: int, rows: list[VectorRow]) -> None:
    """Store one batch of reflection vectors, logged as vector-only changes of the reflection pool
    (recall fills them into its cosine path in place)."""
    vector_cache_write(model=Reflection, character_id=character_id, pool=RECALL_POOL, rows=rows)
