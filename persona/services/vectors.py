"""Writes of the persona entries' vector cache (filled by recall's embedding backfill)."""

from __future__ import annotations

from nekomem.vector_cache import VectorRow, vector_cache_write
from persona.models import CHANGE_POOL, PersonaEntry


def persona_entry_vectors_write(*, character_id: int, rows: list[VectorRow]) -> None:
    """Store one batch of entry vectors, logged as vector-only changes of the persona pool."""
    vector_cache_write(model=PersonaEntry, character_id=character_id, pool=CHANGE_POOL, rows=rows)
