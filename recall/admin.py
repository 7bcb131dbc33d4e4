"""Recall's own store in the admin: written by the embedding backfill and the pairs pass only."""

from __future__ import annotations

import base64

from django.contrib import admin

from nekomem.admin import ServiceWrittenAdmin
from recall.models import PairsCursor, RawTurnVector, ScopedWriteKey, SubjectForgetEpoch, SubjectRecord


@admin.register(RawTurnVector)
class RawTurnVectorAdmin(ServiceWrittenAdmin):
    list_display = ("raw", "character", "embedding_model_id", "dimensions")
    list_filter = ("embedding_model_id",)
    search_fields = ("character__name", "embedding_model_id")
    list_select_related = ("character",)
    raw_id_fields = ("raw",)
    exclude = ("embedding",)  # base64 of a float16 vector: its size says what matters
    readonly_fields = ("dimensions",)
    show_full_result_count = False

    @admin.display(description="dimensions")
    def dimensions(self, obj: RawTurnVector) -> int:
        return len(base64.b64decode(obj.embedding)) // 2 if obj.embedding else 0  # float16


@admin.register(PairsCursor)
class PairsCursorAdmin(ServiceWrittenAdmin):
    list_display = ("character", "through_version")
    search_fields = ("character__name",)
    list_select_related = ("character",)


@admin.register(SubjectRecord)
class SubjectRecordAdmin(ServiceWrittenAdmin):
    """The group-chat subjects a character has heard of (their memories are in each layer's rows,
    filtered by subject on the memory browser's pages); forgetting one is ``scoped_forget``."""

    list_display = (
        "subject_key",
        "character",
        "subject_kind",
        "scope",
        "display_name",
        "prompt_locale",
        "last_write_at",
    )
    list_filter = ("subject_kind", "prompt_locale", "character")
    search_fields = ("subject_key", "scope", "display_name")
    list_select_related = ("character",)
    date_hierarchy = "last_write_at"


@admin.register(SubjectForgetEpoch)
class SubjectForgetEpochAdmin(ServiceWrittenAdmin):
    """``scoped_forget`` tombstones: a keyed write with a lower epoch is dropped as stale."""

    list_display = ("subject_key", "character", "epoch", "generation", "forgotten_at")
    list_filter = ("character",)
    search_fields = ("subject_key",)
    list_select_related = ("character",)
    date_hierarchy = "forgotten_at"


@admin.register(ScopedWriteKey)
class ScopedWriteKeyAdmin(ServiceWrittenAdmin):
    """Keyed ``scoped_history`` writes: a pending key is resumed from its journal by a retry (no second
    LLM call), a done one answers the retry as a duplicate. Kept for a year."""

    list_display = ("key", "character", "status", "fingerprint", "subjects", "created_at")
    list_filter = ("status", "character")
    # The journal holds extracted memory text: searched by key and subject, never by that text.
    search_fields = ("key", "subject_keys")
    list_select_related = ("character",)
    date_hierarchy = "created_at"

    @admin.display(description="subjects")
    def subjects(self, obj: ScopedWriteKey) -> str:
        return ", ".join(key for key in obj.subject_keys.split("\n") if key)
