"""Writes of the raw-turn vector cache (``recall.models.RawTurnVector``), filled by the backfill."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from nekomem.characters.services import character_memory_changed
from recall.models import RawTurnVector
from recall.selectors import RAW_TURN_POOL
from recent.models import RawMessage

# (raw message pk, base64 float16 vector or "" for nothing to embed, sha256 of the text, model id)
RawVectorRow = tuple[int, str, str, str]


def raw_turn_vectors_write(*, character_id: int, rows: list[RawVectorRow]) -> None:
    """Store vectors of one character's raw turns in one transaction and log them as vector-only
    changes of the raw-turn pool (recall fills them in place). Turns deleted meanwhile are skipped."""
    if not rows:
        return
    with transaction.atomic():
        present = set(
            RawMessage.objects.filter(character_id=character_id, pk__in=[pk for pk, *_ in rows]).values_list(
                "pk", flat=True
            )
        )
        kept = [row for row in rows if row[0] in present]
        RawTurnVector.objects.bulk_create(
            [
                RawTurnVector(
                    raw_id=pk,
                    character_id=character_id,
                    embedding=vector,
                    embedding_text_sha256=sha,
                    embedding_model_id=model_id,
                )
                for pk, vector, sha, model_id in kept
            ],
            update_conflicts=True,
            unique_fields=["raw"],
            update_fields=["embedding", "embedding_text_sha256", "embedding_model_id"],
        )
        embedded = [pk for pk, vector, *_ in kept if vector]
        if embedded:
            character_memory_changed(
                character_id=character_id, pool=RAW_TURN_POOL, rows=embedded, vector_only=True
            )


# (raw message pk, start, end) of the time a turn says, or (pk, None, None): it names none
RawWindowRow = tuple[int, datetime | None, datetime | None]


def raw_turn_windows_write(*, character_id: int, rows: list[RawWindowRow]) -> None:
    """Store the time each of one character's raw turns says (a row for every turn read, so none is
    read twice) in one transaction, and log the turns that name one as changed rows of the raw-turn
    pool: an index that holds them re-reads them with their window. Turns deleted meanwhile are
    skipped; a vector stored already is kept."""
    if not rows:
        return
    with transaction.atomic():
        present = set(
            RawMessage.objects.filter(character_id=character_id, pk__in=[pk for pk, *_ in rows]).values_list(
                "pk", flat=True
            )
        )
        kept = [row for row in rows if row[0] in present]
        RawTurnVector.objects.bulk_create(
            [
                RawTurnVector(raw_id=pk, character_id=character_id, event_start_at=start, event_end_at=end)
                for pk, start, end in kept
            ],
            update_conflicts=True,
            unique_fields=["raw"],
            update_fields=["event_start_at", "event_end_at"],
        )
        dated = [pk for pk, start, _ in kept if start is not None]
        if dated:
            character_memory_changed(character_id=character_id, pool=RAW_TURN_POOL, rows=dated)


def raw_turn_vectors_prune(*, character_id: int, covered: datetime) -> int:
    """Drop the vectors of turns extraction has covered through ``covered`` (they left the pool)."""
    done = RawMessage.objects.filter(character_id=character_id, timestamp__lte=covered).values("pk")
    deleted, _ = RawTurnVector.objects.filter(character_id=character_id, raw_id__in=done).delete()
    return deleted
