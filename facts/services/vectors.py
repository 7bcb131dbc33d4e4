"""Writes of the facts' vector cache (filled by recall's embedding backfill)."""

from __future__ import annotations

from django.db import connection, transaction

from facts.models import RECALL_POOL, Fact
from nekomem.characters.services import character_memory_changed

# (fact pk, base64 float16 vector, sha256 of the embedded text, model id)
VectorRow = tuple[int, str, str, str]


def fact_vectors_write(*, character_id: int, rows: list[VectorRow]) -> None:
    """Store vectors for one character's facts in one transaction and bump its recall version.

    A row whose text changed since it was embedded keeps the vector, but the stored text hash no
    longer matches, so every reader rejects it and the next backfill replaces it.
    """
    if not rows:
        return
    table = connection.ops.quote_name(Fact._meta.db_table)
    params = [(vector, text_sha, model_id, pk, character_id) for pk, vector, text_sha, model_id in rows]
    with transaction.atomic(), connection.cursor() as cursor:
        # One prepared UPDATE per row: Django's bulk_update builds a CASE per column, which is several
        # times slower for 512 rows of 1 KB vectors.
        cursor.executemany(
            f"UPDATE {table} SET embedding = %s, embedding_text_sha256 = %s, "
            "embedding_model_id = %s WHERE id = %s AND character_id = %s",
            params,
        )
        character_memory_changed(
            character_id=character_id, pool=RECALL_POOL, rows=[pk for pk, *_ in rows], vector_only=True
        )


VECTOR_DROP_BATCH = 5_000


def fact_vectors_drop_archived() -> int:
    """Clear the vectors of archived facts (retention): recall reads archived facts by BM25 only and the
    pairs pass skips them, so the vectors are dead bytes (about 1 KB a fact). A restored fact is active
    again, and the embedding backfill gives it a vector as it does any fact without one."""
    dropped = 0
    holding = Fact.objects.filter(archived=True).exclude(embedding="")
    while pks := list(holding.order_by("pk").values_list("pk", flat=True)[:VECTOR_DROP_BATCH]):
        dropped += Fact.objects.filter(pk__in=pks, archived=True).update(
            embedding="", embedding_text_sha256="", embedding_model_id=""
        )
    return dropped
