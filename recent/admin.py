"""The recent layer in the admin: browsable; the window is edited only through the memory browser
(``recent_window_replace``), and the raw log and the layer's state only by their services."""

from django.contrib import admin

from nekomem.admin import ServiceWrittenAdmin
from recent.models import RawMessage, RecentMessage, RecentMeta, RecentReviewState, RecentWindowState


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
