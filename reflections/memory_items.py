# ruff: noqa: DJ001  the original files tell null from "" in these fields, so export needs both
"""The field groups that reflections and persona entries share, as abstract models, and the bridge
between a row's evidence fields and the pure evidence math of ``reflections.evidence``.

Both layers keep their rows in the original's shapes (reflections.json, persona.json), which carry
the same evidence, mention, vector-cache and archive fields; defining them once keeps the two from
drifting apart.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
from django.db import models

from nekomem.embeddings import Embedder, decode_vector, text_fingerprint
from reflections.evidence import Evidence, evidence_score


class EvidenceFields(models.Model):
    """Raw reinforcement (R) and disputation (D) with their clocks (reference §2.7)."""

    reinforcement = models.FloatField(default=0.0)
    disputation = models.FloatField(default=0.0)
    rein_last_signal_at = models.DateTimeField(null=True, blank=True)
    disp_last_signal_at = models.DateTimeField(null=True, blank=True)
    sub_zero_days = models.PositiveIntegerField(default=0)
    sub_zero_last_increment_date = models.DateField(null=True, blank=True)
    user_fact_reinforce_count = models.PositiveIntegerField(default=0)

    class Meta:
        abstract = True

    def evidence(self) -> Evidence:
        return Evidence(
            reinforcement=self.reinforcement,
            disputation=self.disputation,
            rein_last_signal_at=self.rein_last_signal_at,
            disp_last_signal_at=self.disp_last_signal_at,
            user_fact_reinforce_count=self.user_fact_reinforce_count,
            protected=bool(getattr(self, "protected", False)),
        )

    def evidence_assign(self, evidence: Evidence) -> None:
        self.reinforcement = evidence.reinforcement
        self.disputation = evidence.disputation
        self.rein_last_signal_at = evidence.rein_last_signal_at
        self.disp_last_signal_at = evidence.disp_last_signal_at
        self.user_fact_reinforce_count = evidence.user_fact_reinforce_count

    def score(self, *, now: datetime) -> float:
        return evidence_score(self.evidence(), now=now)


class MentionFields(models.Model):
    """Mention suppression (reference §3.6): recent mentions and whether the item is suppressed."""

    recent_mentions = models.JSONField(default=list, blank=True)
    suppress = models.BooleanField(default=False)
    suppressed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class VectorCacheFields(models.Model):
    """The cached embedding (valid while text hash and model match) and the refine state."""

    embedding = models.TextField(blank=True, default="")
    embedding_text_sha256 = models.CharField(max_length=64, blank=True, default="")
    embedding_model_id = models.CharField(max_length=128, blank=True, default="")
    last_refine_cluster_hash = models.CharField(max_length=64, null=True, blank=True)
    last_refine_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    def cached_vector(self, embedder: Embedder | None) -> np.ndarray | None:
        """The cached vector while both fingerprints (text sha256, model id) match (reference §6)."""
        if embedder is None or self.embedding_model_id != embedder.model_id:
            return None
        if self.embedding_text_sha256 != text_fingerprint(getattr(self, "text", "") or ""):
            return None
        return decode_vector(self.embedding, embedder.dim)


class ArchivedFields(models.Model):
    """When the item moved to an archive shard, and which one (null while live)."""

    archived_at = models.DateTimeField(null=True, blank=True)
    archive_shard_path = models.CharField(max_length=200, null=True, blank=True)

    class Meta:
        abstract = True
