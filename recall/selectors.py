"""Reads for recall: the candidate pools of one character, as plain ``Candidate`` records.

Every pool is one function returning candidates; ``recall_pools`` lists them, so a new layer
(reflections, once they land) joins recall by adding one line there. Persona is never a pool
(it is already in the system prompt, reference §4.1).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from facts.models import Fact
from nekomem.characters.models import Character
from nekomem.embeddings import Embedder, text_fingerprint
from recall.engine import Candidate
from recall.reflection_pool import reflection_candidates

CHUNK = 5000


def stored_vector(
    *, vector: str, text_sha256: str, model_id: str, text: str, embedder: Embedder | None
) -> np.ndarray | None:
    """The cached vector when both fingerprints match the current text and model (§4.4), else None."""
    if embedder is None or not vector or model_id != embedder.model_id:
        return None
    if text_sha256 != text_fingerprint(text):
        return None  # the text was rewritten after the vector was computed
    return decode_vector16(vector, embedder.dim)


def decode_vector16(stored: str, dim: int) -> np.ndarray | None:
    """Like ``decode_vector`` but kept as float16 (half the memory while a 100k-row index is built)."""
    try:
        raw = base64.b64decode(stored, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) != dim * 2:
        return None
    arr = np.frombuffer(raw, dtype="<f2")
    return arr if np.isfinite(arr).all() else None


def fact_candidates(*, character_id: int, embedder: Embedder | None) -> Iterator[Candidate]:
    """Active facts (tier ``fact``, BM25 + cosine) and archived ones (``fact_archive``, BM25 only)."""
    rows = (
        Fact.objects.filter(character_id=character_id)
        .order_by("pk")
        .values_list(
            "fact_id",
            "text",
            "entity",
            "archived",
            "created_at",
            "event_start_at",
            "event_end_at",
            "embedding",
            "embedding_text_sha256",
            "embedding_model_id",
            "extra",
        )
    )
    for fid, text, entity, archived, created, start, end, vec, sha, model, extra in rows.iterator(
        chunk_size=CHUNK
    ):
        if not text or not text.strip():
            continue  # hard filter: empty rows (§4.2)
        extra = extra if isinstance(extra, dict) else {}
        yield Candidate(
            id=fid,
            text=text,
            tier="fact_archive" if archived else "fact",
            entity=entity,
            created_at=created,
            event_start_at=start,
            event_end_at=end,
            # Archived facts are not in the cosine pool; skip decoding their vectors.
            vector=None
            if archived
            else stored_vector(vector=vec, text_sha256=sha, model_id=model, text=text, embedder=embedder),
            subject_kind=extra.get("subject_kind"),
            subject_id=extra.get("subject_id"),
            scope=extra.get("scope"),
        )


PoolReader = Callable[..., Iterator[Candidate]]
# One line per recallable layer.
RECALL_POOLS: tuple[PoolReader, ...] = (fact_candidates, reflection_candidates)


def recall_pools(*, character_id: int, embedder: Embedder | None) -> Iterator[Candidate]:
    """Every pool's candidates, streamed: the index consumes them one by one (no 100k-row list)."""
    for reader in RECALL_POOLS:
        yield from reader(character_id=character_id, embedder=embedder)


def character_by_name(*, name: str) -> Character | None:
    return Character.objects.filter(name=name).first()


@dataclass(frozen=True)
class RecallCharacter:
    pk: int
    memory_version: int
    stop_names: list[str]


def recall_character(*, name: str) -> RecallCharacter | None:
    """What a recall request needs of its character, in one indexed query (no model instance)."""
    row = (
        Character.objects.filter(name=name)
        .values_list("pk", "memory_version", "master_name", "master_nicknames")
        .first()
    )
    if row is None:
        return None
    pk, version, master_name, nicknames = row
    # The same list as ``Character.stop_names``.
    names = [name, master_name, *(nicknames if isinstance(nicknames, list) else [])]
    return RecallCharacter(pk=pk, memory_version=int(version), stop_names=[n for n in names if n])


def character_memory_version(*, character_id: int) -> int | None:
    """One indexed lookup per request: the version the recall cache compares with."""
    row: Any = Character.objects.filter(pk=character_id).values_list("memory_version", flat=True).first()
    return int(row) if row is not None else None
