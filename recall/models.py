"""Recall's own store: the vector cache of the raw-turn pool.

Facts, reflections and persona entries keep their vectors on their own rows; a raw-log turn is the
recent layer's row, written on the chat path, and needs a vector only while fact extraction has not
covered it. So the vectors of raw turns live here, keyed by the raw message, written by the embedding
backfill and dropped once extraction's cursor has passed their turn.
"""

from __future__ import annotations

from django.db import models

from nekomem.characters.models import Character
from recent.models import RawMessage


class RawTurnVector(models.Model):
    """The cached vector of one raw turn, valid while its text fingerprint and model id match, and the
    time the turn says it is about.

    An empty ``embedding`` with the current model id marks a turn with nothing to embed (a system or
    tool message, an empty text), so the backfill does not look at it again.
    """

    raw = models.OneToOneField(
        RawMessage, on_delete=models.CASCADE, primary_key=True, related_name="recall_vector"
    )
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+", db_index=False)
    embedding = models.TextField(blank=True, default="", help_text="base64 float16 vector")
    embedding_text_sha256 = models.CharField(max_length=64, blank=True, default="")
    embedding_model_id = models.CharField(max_length=128, blank=True, default="")
    # When the turn says its event happened ("I started the cello last week", "上周末去了泰山"), read by
    # the time parser against the turn's own timestamp as it arrives: a time-windowed query finds the
    # turn before any fact is extracted from it. Null: the turn names no time (its timestamp is its time).
    event_start_at = models.DateTimeField(null=True, blank=True)
    event_end_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["character", "raw"], name="raw_vector_character")]
        verbose_name = "raw-turn vector"

    def __str__(self) -> str:
        return f"raw turn {self.raw_id} ({self.embedding_model_id or 'no model'})"


class PairsCursor(models.Model):
    """How far the paraphrase-pair pass has read a character's vector writes (``MemoryChange``
    versions): facts whose vectors were written after it are compared with the others next.

    The pass runs once a character's vectors are all in, so after a large import the vectors (what
    queries use) are not held up by the pairs (quadratic in the facts: minutes at 100k).
    """

    character = models.OneToOneField(Character, on_delete=models.CASCADE, primary_key=True, related_name="+")
    through_version = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"pairs of character {self.character_id} through version {self.through_version}"
