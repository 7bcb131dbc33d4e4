# ruff: noqa: DJ001  the original files tell null from "" in these fields, so export needs both
from __future__ import annotations

from django.db import models

from nekomem.characters.models import Character
from nekomem.subjects import KEY_MAX, PrivateRowsManager
from reflections.models import ArchivedFields, EvidenceFields, MentionFields, VectorCacheFields

# How memory-change log rows name a persona entry (by its primary key): an entry written or deleted,
# or its vector written by the backfill. Persona is in no recall pool (reference §4.1): a recall index
# skips these rows and keeps serving; the working context's render re-reads the persona for them.
CHANGE_POOL = "persona"
# How memory-change log rows name a queued correction (by its primary key): for its history only.
CORRECTION_POOL = "correction"  # at most 16 characters: MemoryChange.pool


class PersonaSection(models.Model):
    """One top-level key of ``persona.json`` (``master``, ``neko``, ``relationship``, ``@kind:id``, …).

    ``position`` keeps the file's key order, which is the render order; ``extra`` holds the section's
    keys other than ``facts`` (a scoped section's subject and display name).
    """

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="persona_sections")
    key = models.CharField(max_length=KEY_MAX)
    position = models.PositiveIntegerField(default=0)
    extra = models.JSONField(default=dict, blank=True)

    subject_key = models.CharField(
        max_length=KEY_MAX,
        blank=True,
        default="",
        help_text="<kind>:<subject_id> of a group-chat subject; '' = private.",
    )

    # The default manager hides group-chat subjects' rows (nekomem.subjects); with_subjects sees all.
    objects = PrivateRowsManager["PersonaSection"]()
    with_subjects = models.Manager["PersonaSection"]()

    class Meta:
        ordering = ["character", "position", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["character", "key"], name="persona_section_unique_key"),
        ]

    def __str__(self) -> str:
        return self.key


class PersonaEntry(EvidenceFields, MentionFields, VectorCacheFields, ArchivedFields):
    """One persona fact (a ``persona.json`` entry, or an archived one in ``persona_archive/``; §2.10).

    Reinforcement and disputation are stored raw; the score is computed on read (``reflections.evidence``);
    protected (character-card) entries score +∞.
    """

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="persona_entries")
    section = models.CharField(max_length=KEY_MAX, help_text="The persona.json key the entry lives under.")
    position = models.PositiveIntegerField(default=0, help_text="Order within the section (file order).")
    entry_id = models.CharField(max_length=120)
    text = models.TextField()
    source = models.CharField(max_length=40, default="manual")
    source_id = models.CharField(max_length=200, null=True, blank=True)
    created_at = models.DateTimeField(null=True, blank=True)

    protected = models.BooleanField(default=False)

    # Provenance.
    merged_from_ids = models.JSONField(default=list, blank=True)
    version_history = models.JSONField(default=list, blank=True, help_text="At most 5 earlier texts.")

    # Token-count cache, valid while the text's sha256 and the tokenizer identity match.
    token_count = models.PositiveIntegerField(null=True, blank=True)
    token_count_text_sha256 = models.CharField(max_length=64, null=True, blank=True)
    token_count_tokenizer = models.CharField(max_length=64, null=True, blank=True)

    extra = models.JSONField(default=dict, blank=True, help_text="Unknown keys of imported entries.")
    updated_at = models.DateTimeField(auto_now=True)

    subject_key = models.CharField(
        max_length=KEY_MAX,
        blank=True,
        default="",
        help_text="<kind>:<subject_id> of a group-chat subject; '' = private.",
    )

    # The default manager hides group-chat subjects' rows (nekomem.subjects); with_subjects sees all.
    objects = PrivateRowsManager["PersonaEntry"]()
    with_subjects = models.Manager["PersonaEntry"]()

    class Meta:
        ordering = ["character", "section", "position", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["character", "entry_id"], name="persona_entry_unique_id"),
        ]
        indexes = [
            models.Index(fields=["character", "subject_key"], name="persona_entry_subject"),
            models.Index(fields=["character", "archive_shard_path", "section"], name="persona_entry_live"),
        ]

    def __str__(self) -> str:
        return f"{self.section}.{self.entry_id}"


class PersonaCorrection(models.Model):
    """One ``persona_corrections.json`` item: an observation that overlaps an existing entry (§2.11)."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="persona_corrections")
    old_text = models.TextField()
    new_text = models.TextField()
    entity = models.CharField(max_length=200)
    created_at = models.DateTimeField()
    resolve_attempts = models.PositiveSmallIntegerField(default=0)
    # The original drops a pair after 5 failed resolutions with only a log line; here it stays, out of
    # the queue (and of persona_corrections.json), for a person to resolve in the browser or by REST.
    dropped_at = models.DateTimeField(
        null=True, blank=True, help_text="When the resolver gave up on it (5 attempts); none while queued."
    )
    dedup_key = models.CharField(max_length=64, help_text="sha256 of old text, new text, entity and scope")
    extra = models.JSONField(default=dict, blank=True, help_text="Scoped subject and speaker fields.")

    subject_key = models.CharField(
        max_length=KEY_MAX,
        blank=True,
        default="",
        help_text="<kind>:<subject_id> of a group-chat subject; '' = private.",
    )

    # The default manager hides group-chat subjects' rows (nekomem.subjects); with_subjects sees all.
    objects = PrivateRowsManager["PersonaCorrection"]()
    with_subjects = models.Manager["PersonaCorrection"]()

    class Meta:
        ordering = ["character", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["character", "dedup_key"], name="persona_correction_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.entity}: {self.old_text[:20]} → {self.new_text[:20]}"


class PersonaArchiveShard(models.Model):
    """One ``persona_archive/<YYYY-MM-DD>_<uuid8>.json`` file: at most 500 archived entries."""

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="persona_shards")
    name = models.CharField(max_length=64)
    created_at = models.DateTimeField()
    size = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["character", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["character", "name"], name="persona_shard_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name


class PersonaState(models.Model):
    """Per-character bookkeeping: which card the protected entries mirror, and ``settings.json``."""

    character = models.OneToOneField(Character, on_delete=models.CASCADE, related_name="persona_state")
    card_sha256 = models.CharField(max_length=64, blank=True, default="")
    legacy_settings = models.JSONField(
        null=True, blank=True, help_text="settings.json as imported, for export and the fallback text."
    )
    legacy_migrated = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"persona state of {self.character_id}"
