"""The vector cache that reflections and persona entries share (``VectorCacheFields``): which rows the
embedding backfill still has to embed, and the write of its batches.

Facts keep their own faster path (``facts.services.fact_vectors_write``: 100k-row imports); these two
pools are small, so a plain UPDATE per row is enough.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Count, Q, QuerySet

from nekomem.characters.services import character_memory_changed
from nekomem.embeddings import text_fingerprint
from nekomem.runtime.status import VectorCoverage
from reflections.memory_items import VectorCacheFields

# (pk, base64 float16 vector, sha256 of the embedded text, model id): one row of the backfill's writes
VectorRow = tuple[int, str, str, str]


def vector_cache_stale(rows: QuerySet[Any], *, model_id: str, limit: int) -> list[tuple[int, str]]:
    """(pk, text) of the rows of ``rows`` (a queryset of a ``VectorCacheFields`` model with a ``text``)
    whose vector is missing, of another model, or of an older text; at most ``limit``."""
    stale: list[tuple[int, str]] = []
    ordered = rows.order_by("pk")
    missing = Q(embedding="") | ~Q(embedding_model_id=model_id)
    for pk, text in ordered.filter(missing).values_list("pk", "text")[:limit].iterator(chunk_size=2000):
        if text and text.strip():
            stale.append((pk, text))
    if len(stale) >= limit:
        return stale
    # The vectors of the current model: is each of the same text still? (the vectors stay in the database)
    fresh = ordered.exclude(missing).values_list("pk", "text", "embedding_text_sha256")
    for pk, text, sha in fresh.iterator(chunk_size=2000):
        if text and text.strip() and sha != text_fingerprint(text):
            stale.append((pk, text))
            if len(stale) >= limit:
                break
    return stale


def vector_cache_write(
    *, model: type[VectorCacheFields], character_id: int, pool: str, rows: list[VectorRow]
) -> None:
    """Store one character's vectors of ``model`` rows in one transaction, logged as vector-only
    changes of ``pool`` (a recall index fills them in place; a pool it does not index is skipped).

    Only the vector columns are written: a text rewritten meanwhile keeps its new text, and the stale
    fingerprint makes every reader reject the vector until the next backfill replaces it."""
    if not rows:
        return
    with transaction.atomic():
        for pk, vector, text_sha, model_id in rows:
            # The concrete models have the character key; the abstract fields do not (hence the dict).
            scope: dict[str, int] = {"pk": pk, "character_id": character_id}
            # The base manager: a layer's default manager hides group-chat subjects' rows, and their
            # vectors are written the same way.
            model._base_manager.filter(**scope).update(
                embedding=vector, embedding_text_sha256=text_sha, embedding_model_id=model_id
            )
        character_memory_changed(
            character_id=character_id, pool=pool, rows=[pk for pk, *_ in rows], vector_only=True
        )


def vector_cache_coverage(rows: QuerySet[Any], *, model_id: str) -> VectorCoverage:
    """Rows of ``rows`` with a vector of ``model_id`` and rows still without one, for the status report
    (one aggregate; a text rewritten since its vector is caught by the backfill's own check)."""
    counts = (
        rows.exclude(text="")
        .order_by()
        .aggregate(
            total=Count("pk"),
            missing=Count("pk", filter=Q(embedding="") | ~Q(embedding_model_id=model_id)),
        )
    )
    return VectorCoverage(with_vectors=counts["total"] - counts["missing"], without_vectors=counts["missing"])
