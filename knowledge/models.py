"""The public knowledge store: packs the user imports, shared by every character (reference §1.8).

Not memory: no row here belongs to a character, chat never writes here, and nothing here is read by
a memory layer. A pack's rows are built as a new ``PackVersion`` beside the one that answers and
switched in with one update of ``KnowledgePack.version``, so a half-built or failed import is never
visible. ``KnowledgeStore.version`` changes with every change of what a query may see; readers key
their caches on it, so on PostgreSQL every server sees an import, a disable or a removal at its next
query.
"""

from __future__ import annotations

import uuid

from django.db import models

from nekomem.journal.models import DurableWork

MATERIAL_TYPE_CHOICES = [("knowledge", "knowledge"), ("corpus", "corpus")]


class KnowledgeStore(models.Model):
    """The one row of store-wide state: the global switch and the change counter."""

    enabled = models.BooleanField(default=True, help_text="Off: queries answer 'disabled', no vectors fill.")
    version = models.BigIntegerField(default=0, help_text="Changes with every pack, entry or policy change.")
    vectors_version = models.BigIntegerField(
        default=0, help_text="Changes when the background fill stored vectors (a lookup may lag behind it)."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "knowledge store"

    def __str__(self) -> str:
        return f"knowledge store v{self.version} ({'on' if self.enabled else 'off'})"


class PackVersion(models.Model):
    """One imported version of a pack: its canonical JSON and the rows built from it."""

    pack_id = models.CharField(max_length=64, db_index=True)
    sha256 = models.CharField(max_length=64)
    canonical = models.BinaryField(help_text="The pack in canonical form (what registry files hold).")
    declared_material_type = models.CharField(max_length=16, choices=MATERIAL_TYPE_CHOICES)
    source_name = models.CharField(max_length=200)
    source_homepage = models.CharField(max_length=500, blank=True)
    source_license = models.CharField(max_length=500, blank=True)
    entries_total = models.PositiveIntegerField(default=0)
    chunks_total = models.PositiveIntegerField(default=0)
    size_bytes = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.pack_id} {self.sha256[:16]}"


class KnowledgePack(models.Model):
    """An installed pack and the user's state for it, kept across restarts and re-imports."""

    pack_id = models.CharField(max_length=64, unique=True)
    version = models.OneToOneField(
        PackVersion,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="installed_as",
        help_text="The version that answers; none while a first import builds, or when broken.",
    )
    material_type_override = models.CharField(
        max_length=16,
        choices=MATERIAL_TYPE_CHOICES,
        blank=True,
        default="",
        help_text="Empty: the declared type.",
    )
    auto_context = models.BooleanField(default=False, help_text="Stored and reported; changes nothing yet.")
    local_embedding = models.BooleanField(default=True, help_text="Off: keyword-only for this pack.")
    disabled_titles = models.JSONField(
        default=list, blank=True, help_text="Title keys of disabled entries; kept across re-imports."
    )
    broken = models.BooleanField(default=False, help_text="Its file could not be read back; not served.")
    installed_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["pack_id"]

    def __str__(self) -> str:
        return self.pack_id

    @property
    def effective_material_type(self) -> str:
        if self.material_type_override:
            return self.material_type_override
        return self.version.declared_material_type if self.version is not None else "knowledge"


class KnowledgeEntry(models.Model):
    version = models.ForeignKey(PackVersion, on_delete=models.CASCADE, related_name="entries")
    ordinal = models.PositiveIntegerField()
    title = models.CharField(max_length=500)
    title_key = models.CharField(max_length=500)
    summary = models.TextField(blank=True)
    content = models.TextField()
    aliases = models.JSONField(default=list, blank=True)
    recognition = models.JSONField(default=list, blank=True)
    tags = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["version", "ordinal"]
        verbose_name_plural = "knowledge entries"
        constraints = [
            models.UniqueConstraint(fields=["version", "title_key"], name="knowledge_entry_title_unique")
        ]

    def __str__(self) -> str:
        return self.title


class KnowledgeChunk(models.Model):
    """A passage of an entry, searched by BM25 and (once filled in the background) by its vector."""

    MAX_ATTEMPTS = 3

    version = models.ForeignKey(PackVersion, on_delete=models.CASCADE, related_name="chunks")
    entry = models.ForeignKey(KnowledgeEntry, on_delete=models.CASCADE, related_name="chunks")
    ordinal = models.PositiveSmallIntegerField()
    text = models.TextField()
    vector = models.BinaryField(null=True, blank=True, help_text="float32 unit vector.")
    model_id = models.CharField(max_length=120, blank=True, help_text="The model the vector is from.")
    # Counted by the import job, so a serving process reads numbers instead of tokenising the text
    # (``knowledge.search.stored_rows``); none for rows written before it, tokenised as before.
    bm25_row = models.BinaryField(
        null=True, blank=True, editable=False, help_text="The chunk's BM25 row, counted at import."
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    failed = models.BooleanField(
        default=False, help_text="Three attempts failed; reset by the pack's policy."
    )

    class Meta:
        ordering = ["entry", "ordinal"]
        indexes = [models.Index(fields=["failed", "model_id"], name="knowledge_chunk_fill")]

    def __str__(self) -> str:
        return f"{self.entry_id}#{self.ordinal}"


class ImportState(models.TextChoices):
    QUEUED = "queued"
    BUILDING = "building"
    ACTIVE = "active"
    FAILED = "failed"
    CANCELLED = "cancelled"


class KnowledgeImport(DurableWork):
    """An import job. Its own table on the kernel's job mechanism (claimed, leased and retried by
    ``nekomem.journal.jobs``' work functions): a kernel ``Job`` belongs to a character, and a pack
    belongs to none."""

    PENDING_STATES = (ImportState.QUEUED, ImportState.BUILDING)
    FINISHED_STATES = (ImportState.ACTIVE, ImportState.FAILED, ImportState.CANCELLED)

    job_id = models.CharField(max_length=32, unique=True, default="", editable=False)
    pack_id = models.CharField(max_length=64, db_index=True)
    state = models.CharField(max_length=10, choices=ImportState.choices, default=ImportState.QUEUED)
    reason = models.CharField(max_length=60, blank=True)
    entries_total = models.PositiveIntegerField(default=0)
    chunks_total = models.PositiveIntegerField(default=0)
    staged = models.BinaryField(null=True, blank=True, help_text="The canonical pack until it is built.")
    staged_sha256 = models.CharField(max_length=64, blank=True)
    staged_bytes = models.PositiveIntegerField(default=0)
    building = models.ForeignKey(
        PackVersion, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["state", "created_at"], name="knowledge_import_state")]

    def save(self, *args: object, **kwargs: object) -> None:
        if not self.job_id:
            self.job_id = uuid.uuid4().hex
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    def __str__(self) -> str:
        return f"import {self.pack_id} ({self.state})"


class QueryRecord(models.Model):
    """One query, for the diagnostics page; never the query text."""

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    mode = models.CharField(max_length=10)
    result = models.CharField(max_length=12)
    retrieval_mode = models.CharField(max_length=10, blank=True)
    hits = models.PositiveSmallIntegerField(default=0)
    entry_title = models.CharField(max_length=500, blank=True)
    pack_id = models.CharField(max_length=64, blank=True)
    elapsed_ms = models.PositiveIntegerField(default=0)
    error_type = models.CharField(max_length=80, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.mode} {self.result} ({self.elapsed_ms} ms)"


class IndexBatch(models.Model):
    """One batch of the background vector fill, for the diagnostics page."""

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    model_id = models.CharField(max_length=120)
    selected = models.PositiveSmallIntegerField(default=0)
    stored = models.PositiveSmallIntegerField(default=0)
    failed = models.PositiveSmallIntegerField(default=0)
    elapsed_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "index batches"

    def __str__(self) -> str:
        return f"{self.model_id}: {self.stored}/{self.selected}"
