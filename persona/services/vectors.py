"""Writes of the persona entries' vector cache (filled by recall's embedding backfill)."""

from __future__ import annotations

from persona.models import CHANGE_POOL, PersonaEntry
from reflections.services import VectorRow, vector_cache_write


def persona_entry_vectors_write(*, character_id: int, rows: list[VectorRow]) -> None:
    """Store one batch of entry vectors, logged as vector-only changes of the persona pool."""
    vector_cache_write(model=PersonaEntry, character_id=character_id, pool=CHANGE_POOL, rows=rows)
