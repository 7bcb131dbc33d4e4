from __future__ import annotations

from django.db import models

from nekomem.characters.models import Character


class RecentMessage(models.Model):
    """One message of the recent window, in LangChain ``messages_to_dict`` form.

    The compression memo is the leading ``system`` row. ``position`` orders the window; a splice
    replaces a head of positions with one memo placed before the kept tail.
    """

    class Kind(models.TextChoices):
        HUMAN = "human"
        AI = "ai"
        SYSTEM = "system"

    # No index of its own: recent_unique_position (character, position) serves every lookup by character.
    character = models.ForeignKey(
        Character, on_delete=models.CASCADE, related_name="recent_messages", db_index=False
    )
    position = models.BigIntegerField()
    type = models.CharField(max_length=8, choices=Kind.choices)
    data = models.JSONField(help_text="The message's LangChain ``data`` dict (content, kwargs, metadata).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["character", "position"]
        constraints = [
            models.UniqueConstraint(fields=["character", "position"], name="recent_unique_position")
        ]

    def __str__(self) -> str:
        return f"{self.character_id}#{self.position} {self.type}"

    def as_langchain(self) -> dict:
        return {"type": self.type, "data": self.data}


class RecentMeta(models.Model):
    """``recent_meta.json``: the anchor of the compression stale hint."""

    character = models.OneToOneField(Character, on_delete=models.CASCADE, related_name="recent_meta")
    last_past_block_update_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.character_id}: {self.last_past_block_update_at}"


class RecentWindowState(models.Model):
    """The window's counter and review flag, one row per character that ever wrote to the window.

    Every turn updates it in the same transaction as the window rows (an upsert, so a new character
    needs no set-up); the character row itself only takes the row lock and the activity clock.
    """

    character = models.OneToOneField(
        Character, on_delete=models.CASCADE, primary_key=True, related_name="recent_window_state"
    )
    next_position = models.BigIntegerField(
        default=0,
        help_text="Next free position in the recent window. Appends take positions from it in the database "
        "under the character's row lock, so positions only ever grow and never need a read of the window.",
    )
    review_clean = models.BooleanField(
        default=False, help_text="Set by a finished history review; any new human message clears it."
    )

    def __str__(self) -> str:
        return f"{self.character_id}: next {self.next_position}"


class RawMessage(models.Model):
    """``time_indexed_original``: the raw journal, one row per message, one timestamp per call."""

    # No index of its own: raw_character_time (character, timestamp, id) serves every lookup by character.
    character = models.ForeignKey(
        Character, on_delete=models.CASCADE, related_name="raw_messages", db_index=False
    )
    session_id = models.CharField(max_length=64, help_text="uuid of the /cache or /process call")
    message = models.TextField(help_text="one message as JSON in the {type, data} shape")
    timestamp = models.DateTimeField()

    class Meta:
        ordering = ["character", "timestamp", "id"]
        indexes = [
            models.Index(fields=["character", "timestamp", "id"], name="raw_character_time"),
            models.Index(fields=["timestamp"], name="idx_time_indexed_original_ts"),
        ]
        verbose_name = "raw message (time-indexed log)"

    def __str__(self) -> str:
        return f"{self.character_id} {self.timestamp:%Y-%m-%d %H:%M:%S} {self.session_id[:8]}"


class RecentReviewState(models.Model):
    """Per-character gate state of the recent-history review (reference §3.1.5)."""

    character = models.OneToOneField(Character, on_delete=models.CASCADE, related_name="recent_review_state")
    cutoff_position = models.BigIntegerField(
        null=True, blank=True, help_text="Position of the last message the latest finished review saw."
    )
    last_started_at = models.DateTimeField(null=True, blank=True)
    truncation_strikes = models.PositiveSmallIntegerField(
        default=0, help_text="Consecutive reviews whose reply hit the output limit."
    )
    paused_at_length = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Window length when three truncations paused the review; it resumes once the window "
        "is shorter.",
    )

    def __str__(self) -> str:
        return f"{self.character_id}: cutoff {self.cutoff_position}"


class TheaterCapsule(models.Model):
    """One archived theater (interactive story) episode: the capsule a current main server posts to
    ``/cache`` as a single ``system`` message marked ``theater_numeric_v2`` / ``episode_summary``
    (reference §1.7, §2.1).

    Capsules live beside the window, not in it: compression never summarises them and they are
    never extracted into facts or reflections, yet ``/new_dialog`` and ``/get_recent_history``
    render them as budgeted lines. One per (story, session); a later ``archive_through_revision``
    replaces it.
    """

    character = models.ForeignKey(
        Character, on_delete=models.CASCADE, related_name="theater_capsules", db_index=False
    )
    story_id = models.CharField(max_length=256)
    session_id = models.CharField(max_length=256)
    title = models.CharField(max_length=200, blank=True)
    archive_through_revision = models.BigIntegerField(default=0)
    summary = models.TextField(help_text="The episode summary (the message's content).")
    message = models.JSONField(help_text="The message as posted, in the {type, data} shape.")
    idempotency_key = models.CharField(max_length=160, blank=True)
    archive_attempt = models.BigIntegerField(null=True, blank=True)
    forget_marker = models.CharField(max_length=128, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["character", "updated_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["character", "story_id", "session_id"], name="theater_capsule_per_session"
            )
        ]

    def __str__(self) -> str:
        return f"{self.character_id} {self.story_id}/{self.session_id}@{self.archive_through_revision}"


class TheaterTombstone(models.Model):
    """A retraction (``theater/retract``) or a forget (``theater/forget``) that later capsule writes
    are checked against, so a write still in flight cannot bring the removed capsule back.

    A retraction names a session (and, with ``archive_request_id``, the archive request and its
    attempt); a forget names only the story and carries the fresh ``forget_marker`` that a later
    capsule of that story must carry to be kept.
    """

    class Kind(models.TextChoices):
        RETRACT = "retract"
        FORGET = "forget"

    character = models.ForeignKey(
        Character, on_delete=models.CASCADE, related_name="theater_tombstones", db_index=False
    )
    kind = models.CharField(max_length=8, choices=Kind.choices)
    story_id = models.CharField(max_length=256)
    session_id = models.CharField(max_length=256, blank=True)
    archive_through_revision = models.BigIntegerField(null=True, blank=True)
    archive_request_id = models.CharField(max_length=160, blank=True)
    archive_attempt = models.BigIntegerField(null=True, blank=True)
    forget_marker = models.CharField(max_length=128, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["character", "story_id"], name="theater_tombstone_story")]

    def __str__(self) -> str:
        return f"{self.character_id} {self.kind} {self.story_id}/{self.session_id}"
