"""The recent layer in the admin: browsable; the window is edited only through the memory browser
(``recent_window_replace``), and the raw log and the layer's state only by their services."""

from django.contrib import admin

from nekomem.admin import ServiceWrittenAdmin
from recent.models import (
    RawMessage,
    RecentMessage,
    RecentMeta,
    RecentReviewState,
    RecentWindowState,
    TheaterCapsule,
    TheaterTombstone,
)


@admin.register(RecentMessage)
class RecentMessageAdmin(ServiceWrittenAdmin):
    list_display = ("character", "position", "type", "preview", "created_at")
    list_filter = ("type", "character")
    search_fields = ("data",)
    ordering = ("character", "position")

    @admin.display(description="content")
    def preview(self, obj: RecentMessage) -> str:
        from recent.messages import content_text

        return content_text(obj.data.get("content"))[:100]


@admin.register(RecentWindowState)
class RecentWindowStateAdmin(ServiceWrittenAdmin):
    list_display = ("character", "next_position", "review_clean")
    list_filter = ("review_clean",)
    search_fields = ("character__name",)


@admin.register(RecentMeta)
class RecentMetaAdmin(ServiceWrittenAdmin):
    list_display = ("character", "last_past_block_update_at")


@admin.register(RawMessage)
class RawMessageAdmin(ServiceWrittenAdmin):
    list_display = ("character", "timestamp", "session_id", "preview")
    list_filter = ("character",)
    search_fields = ("session_id", "message")
    date_hierarchy = "timestamp"

    @admin.display(description="message")
    def preview(self, obj: RawMessage) -> str:
        return obj.message[:100]


@admin.register(RecentReviewState)
class RecentReviewStateAdmin(ServiceWrittenAdmin):
    list_display = (
        "character",
        "cutoff_position",
        "last_started_at",
        "truncation_strikes",
        "paused_at_length",
    )


@admin.register(TheaterCapsule)
class TheaterCapsuleAdmin(ServiceWrittenAdmin):
    """Archived theater episodes, one per (story, session). Forgetting a story goes through
    ``theater/forget`` or the memory browser's recent page, which leave the tombstone that keeps a
    late write from bringing it back."""

    list_display = (
        "character",
        "story_id",
        "session_id",
        "title",
        "archive_through_revision",
        "archive_attempt",
        "updated_at",
    )
    list_filter = ("character",)
    # Ids and the story's title; the summary is memory text and is not searched.
    search_fields = ("story_id", "session_id", "title", "idempotency_key")
    list_select_related = ("character",)
    date_hierarchy = "updated_at"


@admin.register(TheaterTombstone)
class TheaterTombstoneAdmin(ServiceWrittenAdmin):
    """Retractions and forgets that later capsule writes are checked against."""

    list_display = (
        "character",
        "kind",
        "story_id",
        "session_id",
        "archive_through_revision",
        "archive_request_id",
        "archive_attempt",
        "created_at",
    )
    list_filter = ("kind", "character")
    search_fields = ("story_id", "session_id", "archive_request_id")
    list_select_related = ("character",)
    date_hierarchy = "created_at"
