# ruff: noqa: DJ001  the original files tell null from "" in these fields, so export needs both
from __future__ import annotations

from django.db import models

from nekomem.characters.models import Character
from nekomem.subjects import KEY_MAX, PrivateRowsManager
from reflections.memory_items import ArchivedFields, EvidenceFields, MentionFields, VectorCacheFields

REFLECTION_SCHEMA_VERSION = 2


RECALL_POOL = "reflection"  # how memory-change log rows name a reflection (by its primary key)


class Reflection(EvidenceFields, MentionFields, VectorCacheFields, ArchivedFields):
    """One Tier-2 reflection (a ``reflections.json`` entry, or an archived one; reference §2.7–2.8).

    Archived reflections stay in this table with status ``archived`` and the shard they belong to
    (``archive_shard_path``), so an entry keeps one row whatever file it is exported into.
    Reinforcement and disputation are stored raw; the score is computed on read
    (``reflections.evidence``).
    """

    class Entity(models.TextChoices):
        MASTER = "master"
        NEKO = "neko"
        RELATIONSHIP = "relationship"

    class Status(models.TextChoices):
        PENDING = "pending"
        CONFIRMED = "confirmed"
        PROMOTED = "promoted"
        DENIED = "denied"
        MERGED = "merged"
        PROMOTE_BLOCKED = "promote_blocked"
        ARCHIVED = "archived"

    class Feedback(models.TextChoices):
        CONFIRMED = "confirmed"
        DENIED = "denied"
        IGNORED = "ignored"

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="reflections")
    reflection_id = models.CharField(max_length=40, help_text="ref_ + sha256(sorted source fact ids)[:16]")
    text = models.TextField()
    entity = models.CharField(max_length=16, choices=Entity.choices, default=Entity.MASTER)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    source_fact_ids = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField()
    feedback = models.CharField(max_length=16, choices=Feedback.choices, null=True, blank=True)
    next_eligible_at = models.DateTimeField(null=True, blank=True, help_text="proactive cool-down")

    # Ontology (nullable: cleared together when invalid or the text is over 150 tokens).
    relation_type = models.CharField(max_length=24, null=True, blank=True)
    temporal_scope = models.CharField(max_length=16, null=True, blank=True)
    subject = models.CharField(max_length=200, null=True, blank=True)

    # Event time.
    event_when_raw = models.JSONField(null=True, blank=True)
    event_start_at = models.DateTimeField(null=True, blank=True)
    event_end_at = models.DateTimeField(null=True, blank=True)
    schema_version = models.PositiveSmallIntegerField(default=REFLECTION_SCHEMA_VERSION)

    # Merge and promotion.
    absorbed_into = models.CharField(max_length=120, null=True, blank=True)
    last_promote_attempt_at = models.DateTimeField(null=True, blank=True)
    promote_attempt_count = models.PositiveIntegerField(default=0)
    promote_blocked_reason = models.CharField(max_length=200, null=True, blank=True)
    auto_confirmed = models.BooleanField(default=False)
    denied_reason = models.CharField(max_length=200, null=True, blank=True)
    reject_reason = models.TextField(null=True, blank=True)

    # Lifecycle stamps.
    confirmed_at = models.DateTimeField(null=True, blank=True)
    promoted_at = models.DateTimeField(null=True, blank=True)
    denied_at = models.DateTimeField(null=True, blank=True)
    merged_at = models.DateTimeField(null=True, blank=True)
    promote_blocked_at = models.DateTimeField(null=True, blank=True)

    extra = models.JSONField(
        default=dict, blank=True, help_text="Unknown keys of imported entries, kept for export."
    )
    updated_at = models.DateTimeField(auto_now=True)

    subject_key = models.CharField(
        max_length=KEY_MAX,
        blank=True,
        default="",
        help_text="<kind>:<subject_id> of a group-chat subject; '' = private.",
    )

    # The default manager hides group-chat subjects' rows (nekomem.subjects); with_subjects sees all.
    objects = PrivateRowsManager["Reflection"]()
    with_subjects = models.Manager["Reflection"]()

    class Meta:
        ordering = ["character", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["character", "reflection_id"], name="reflection_unique_id"),
        ]
        indexes = [
            models.Index(fields=["character", "subject_key"], name="reflection_char_subject"),
            models.Index(fields=["character", "status", "next_eligible_at"], name="reflection_char_status"),
            # The memory browser lists a character's reflections newest first, 50 a page.
            models.Index(fields=["character", "created_at"], name="reflection_char_created"),
        ]

    def __str__(self) -> str:
        return f"{self.reflection_id} ({self.status})"


class ArchiveShard(models.Model):
    """One ``reflection_archive/<YYYY-MM-DD>_<uuid8>.json`` file: at most 500 archived entries."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="reflection_shards")
    name = models.CharField(max_length=64)
    created_at = models.DateTimeField()
    size = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["character", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["character", "name"], name="reflection_shard_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name


class SurfacedReflection(models.Model):
    """One ``surfaced.json`` entry: a reflection the companion brought up, awaiting feedback."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="surfaced_reflections")
    reflection_id = models.CharField(max_length=40)
    text = models.TextField()
    surfaced_at = models.DateTimeField()
    feedback = models.CharField(max_length=16, choices=Reflection.Feedback.choices, null=True, blank=True)
    handled = models.BooleanField(
        default=False, help_text="Promotion or merge closed it without feedback (§2.9)."
    )

    class Meta:
        ordering = ["character", "pk"]
        indexes = [models.Index(fields=["character", "feedback"], name="surfaced_char_feedback")]

    def __str__(self) -> str:
        return f"{self.reflection_id} @ {self.surfaced_at}"


class ReflectionCursor(models.Model):
    """Loop cursors of the layer (``cursors.json``'s rebuttal entry, durable here)."""

    character = models.OneToOneField(Character, on_delete=models.CASCADE, related_name="reflection_cursor")
    rebuttal_checked_until = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.character_id}: rebuttal@{self.rebuttal_checked_until}"
