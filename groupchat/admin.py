"""Group chat's store in the admin: written by the scoped routes' services only."""

from __future__ import annotations

from django.contrib import admin

from groupchat.models import ScopedWriteKey, SubjectForgetEpoch, SubjectRecord
from nekomem.admin import ServiceWrittenAdmin


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
