"""Group chat's own store (reference §1.6): the subjects a character has heard of, the forget
tombstones that fence stale writes, and the keyed ``scoped_history`` journal.

The tables were created by recall's migrations and keep their names (``db_table``): the models moved
here in state only, so an existing database migrates with no table change.
"""

from __future__ import annotations

from django.db import models

from nekomem.characters.models import Character
from nekomem.subjects import KEY_MAX, PART_MAX


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
        db_table = "recall_subjectrecord"
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
        db_table = "recall_subjectforgetepoch"
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
        db_table = "recall_scopedwritekey"
        constraints = [
            models.UniqueConstraint(fields=["character", "key"], name="scoped_write_key_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.status})"
