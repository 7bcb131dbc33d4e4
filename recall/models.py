"""Recall's own store: the vector cache of the raw-turn pool.

Facts, reflections and persona entries keep their vectors on their own rows; a raw-log turn is the
recent layer's row, written on the chat path, and needs a vector only while fact extraction has not
covered it. So the vectors of raw turns live here, keyed by the raw message, written by the embedding
backfill and dropped once extraction's cursor has passed their turn.
"""

from __future__ import annotations

from django.db import models

from nekomem.characters.models import Character
from nekomem.subjects import KEY_MAX, PART_MAX
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


class SubjectRecord(models.Model):
    """A group-chat subject the character has heard of (reference §1.6): its durable prompt locale, its
    display name and when it was last written. The subject's memories live in each layer's rows."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="subject_records")
    subject_key = models.CharField(max_length=KEY_MAX)
    subject_kind = models.CharField(max_length=32)
    subject_id = models.CharField(max_length=PART_MAX)
    scope = models.CharField(max_length=PART_MAX)
    display_name = models.CharField(max_length=64, blank=True, default="")
    prompt_locale = models.CharField(max_length=16, blank=True, default="")
    last_write_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["character", "subject_key", "scope"], name="subject_record_unique"
            ),
        ]

    def __str__(self) -> str:
        return self.subject_key


class SubjectForgetEpoch(models.Model):
    """A ``scoped_forget`` tombstone: the highest forget epoch recorded for a subject key (epochs only
    rise; null when it was only ever forgotten without one), and a generation counting every forget.
    A keyed write with a lower epoch is stale; an unkeyed write whose extraction a forget overtook
    (the generation moved) is dropped."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="subject_forget_epochs")
    subject_key = models.CharField(max_length=KEY_MAX)
    epoch = models.PositiveBigIntegerField(null=True, blank=True)
    generation = models.PositiveIntegerField(default=0)
    forgotten_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["character", "subject_key"], name="subject_forget_epoch_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.subject_key}@{self.epoch}"


class ScopedWriteKey(models.Model):
    """A keyed ``scoped_history`` write (reference §1.6, keyed retries): the request's fingerprint, the
    extraction journalled before it is applied (so a retry of a pending key never asks the model
    again), and the answer once applied. Kept for a year."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="scoped_write_keys")
    key = models.CharField(max_length=128)
    fingerprint = models.CharField(max_length=64)
    subject_keys = models.TextField(
        blank=True,
        default="",
        help_text="The request's subject keys, one per line with a newline on each side.",
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    generated = models.JSONField(null=True, blank=True, help_text="Per segment: the extracted facts.")
    trust = models.JSONField(
        null=True,
        blank=True,
        help_text="Per segment: the trust write journalled with the facts; replayed while pending.",
    )
    answer = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["character", "key"], name="scoped_write_key_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.status})"
