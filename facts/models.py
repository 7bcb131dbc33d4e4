from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from nekomem.characters.models import Character
from nekomem.subjects import KEY_MAX, PrivateRowsManager

FACT_SCHEMA_VERSION = 2
RECALL_POOL = "fact"  # how memory-change log rows name a fact (by its primary key)


class Fact(models.Model):
    """One Tier-1 fact (``facts.json`` entry, reference §2.4).

    The archive (``facts_archive.json``) is a flag on the same table, so every reader sees a fact
    exactly once and an archived fact keeps its shape.
    """

    class Entity(models.TextChoices):
        MASTER = "master"
        NEKO = "neko"
        RELATIONSHIP = "relationship"

    class Source(models.TextChoices):
        USER_OBSERVATION = "user_observation"
        AI_DISCLOSURE = "ai_disclosure"

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="facts")
    fact_id = models.CharField(max_length=80, help_text="fact_<YYYYmmddHHMMSS>_<hash8>")
    text = models.TextField()
    importance = models.PositiveSmallIntegerField(
        default=5, validators=[MinValueValidator(1), MaxValueValidator(10)]
    )
    entity = models.CharField(max_length=16, choices=Entity.choices, default=Entity.MASTER)
    source = models.CharField(max_length=24, choices=Source.choices, default=Source.USER_OBSERVATION)
    tags = models.JSONField(default=list, blank=True)
    hash = models.CharField(max_length=64, help_text="sha256(text)[:16], possibly salted (§2.4)")
    created_at = models.DateTimeField()
    event_when_raw = models.JSONField(null=True, blank=True)
    event_start_at = models.DateTimeField(null=True, blank=True)
    event_end_at = models.DateTimeField(null=True, blank=True)
    absorbed = models.BooleanField(default=False, help_text="One-way: a reflection consumed it.")
    signal_processed = models.BooleanField(default=False, help_text="One-way Stage-2 queue marker.")
    schema_version = models.PositiveSmallIntegerField(default=FACT_SCHEMA_VERSION)
    archived = models.BooleanField(default=False)
    archived_at = models.DateTimeField(null=True, blank=True)
    embedding = models.TextField(blank=True, default="", help_text="base64 float16 vector")
    embedding_text_sha256 = models.CharField(max_length=64, blank=True, default="")
    embedding_model_id = models.CharField(max_length=128, blank=True, default="")
    dedup_tokens = models.TextField(
        blank=True,
        default="",
        help_text="The near-duplicate token set (fts_tokens, sorted, space-joined) under dedup_key.",
    )
    dedup_key = models.CharField(
        max_length=16,
        blank=True,
        default="",
        help_text="Fingerprint of the stop names the tokens were computed with; empty = not indexed yet.",
    )
    extra = models.JSONField(
        default=dict,
        blank=True,
        help_text="Optional keys (external_import, recheck_attempts, speaker/subject fields, unknown "
        "keys of imported files) kept so export round-trips them.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    subject_key = models.CharField(
        max_length=KEY_MAX,
        blank=True,
        default="",
        help_text="<kind>:<subject_id> of a group-chat subject; '' = private.",
    )

    # The default manager hides group-chat subjects' rows (nekomem.subjects); with_subjects sees all.
    objects = PrivateRowsManager["Fact"]()
    with_subjects = models.Manager["Fact"]()

    class Meta:
        ordering = ["character", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["character", "fact_id"], name="fact_unique_id"),
            models.CheckConstraint(
                condition=models.Q(importance__gte=1, importance__lte=10), name="fact_importance_range"
            ),
        ]
        indexes = [
            models.Index(fields=["character", "subject_key"], name="fact_char_subject"),
            models.Index(fields=["character", "archived", "absorbed"], name="fact_char_arch_abs"),
            models.Index(fields=["character", "hash"], name="fact_char_hash"),
            models.Index(fields=["character", "event_start_at"], name="fact_char_event_start"),
            models.Index(fields=["character", "dedup_key"], name="fact_char_dedup_key"),
            # The memory browser's list, newest first, a page at a time (and the default ordering).
            models.Index(fields=["character", "created_at", "id"], name="fact_char_created"),
            # The embedding backfill asks every tick which characters have an open fact without a
            # vector of the current model; with 10 M facts a table scan took 5–12 s of the database
            # each time. ``fact_vector_missing`` is written so that these two answer it.
            models.Index(
                fields=["character"],
                condition=models.Q(archived=False, embedding=""),
                name="fact_open_unvectored",
            ),
            models.Index(
                fields=["embedding_model_id", "character"],
                condition=models.Q(archived=False),
                name="fact_open_vector_model",
            ),
            # The schema re-check looks for v1 facts (few, and none once re-checked) on every tick.
            models.Index(
                fields=["character"],
                condition=models.Q(schema_version__lt=FACT_SCHEMA_VERSION),
                name="fact_old_schema",
            ),
        ]

    def __str__(self) -> str:
        return self.fact_id


class FactToken(models.Model):
    """Inverted index of the near-duplicate layer (§3.3.4): one row per (fact, token).

    ``size`` is the fact's token-set size, repeated so that one covering-index scan yields everything
    the Dice overlap needs. Derived from ``Fact.dedup_tokens``; rebuilt lazily when it is missing.
    """

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+", db_index=False)
    fact = models.ForeignKey(Fact, on_delete=models.CASCADE, related_name="dedup_index")
    token = models.CharField(max_length=64, help_text="The token, or a digest of a very long one.")
    size = models.PositiveIntegerField()

    class Meta:
        indexes = [
            models.Index(fields=["character", "token", "fact", "size"], name="fact_token_lookup"),
        ]

    def __str__(self) -> str:
        return f"{self.fact_id}:{self.token}"


class FactDedupPair(models.Model):
    """One queued (candidate, existing) pair for LLM arbitration (``facts_pending_dedup.json``).

    Fed by the text-overlap layer (cosine null) and by the embedding backfill (cosine > 0.85).
    Texts and fact ids are copied, so a resolved pair stays a readable record of the decision after
    ``merge``/``replace`` deleted one side (its foreign key is then null). The attempts of a batch's
    arbitration are the character's ``facts.dedup`` job; when it dead-letters, so do the batch's pairs.
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        DEAD = "dead"

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="fact_dedup_pairs")
    candidate = models.ForeignKey(
        Fact, null=True, blank=True, on_delete=models.SET_NULL, related_name="dedup_as_candidate"
    )
    existing = models.ForeignKey(
        Fact, null=True, blank=True, on_delete=models.SET_NULL, related_name="dedup_as_existing"
    )
    candidate_fact_id = models.CharField(max_length=80, blank=True, default="")
    existing_fact_id = models.CharField(max_length=80, blank=True, default="")
    candidate_text = models.TextField()
    existing_text = models.TextField()
    entity = models.CharField(max_length=16)
    # Group-chat bucket of the pair, as facts_pending_dedup.json holds it (a string or null).
    subject_key = models.JSONField(null=True, blank=True, default=None)
    scope = models.JSONField(null=True, blank=True, default=None)
    cosine = models.FloatField(null=True, blank=True)
    queued_at = models.DateTimeField()
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    decision = models.CharField(max_length=16, blank=True, default="")
    merged_text = models.TextField(
        blank=True, default="", help_text="The text that survived a merge or replace."
    )
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["character", "queued_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["character", "candidate", "existing"], name="fact_dedup_unique_pair"
            )
        ]
        indexes = [models.Index(fields=["character", "status", "queued_at"], name="fact_dedup_queue")]

    def __str__(self) -> str:
        return f"{self.candidate_fact_id}~{self.existing_fact_id} ({self.status})"


class ExtractionCursor(models.Model):
    """The signal-extraction loop's cursors (kept in memory by the original; durable here).

    Windows are keyed on raw-log timestamps, not on wall-clock check times: raw rows of one character
    are written under its lock, so their timestamps grow in commit order and a window ending at the
    last row read can never skip a row that commits later. A window's failed attempts, back-off and
    waiting reason are the character's ``facts.extraction`` jobs (key ``a`` or ``b``).
    """

    character = models.OneToOneField(Character, on_delete=models.CASCADE, related_name="extraction_cursor")
    last_check_at = models.DateTimeField(
        null=True, blank=True, help_text="path A: when it last succeeded (the 5-minute trigger)"
    )
    last_a_message_at = models.DateTimeField(
        null=True, blank=True, help_text="timestamp of the last message path A processed"
    )
    last_b_check_at = models.DateTimeField(null=True, blank=True)
    a_success_count = models.PositiveIntegerField(default=0)
    last_archive_attempt_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.character_id}: A@{self.last_check_at} B@{self.last_b_check_at}"
