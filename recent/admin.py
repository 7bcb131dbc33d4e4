from django.contrib import admin

from recent.models import RawMessage, RecentMessage, RecentMeta, RecentReviewState


@admin.register(RecentMessage)
class RecentMessageAdmin(admin.ModelAdmin):
    list_display = ("character", "position", "type", "preview", "created_at")
    list_filter = ("type", "character")
    search_fields = ("data",)
    ordering = ("character", "position")

    @admin.display(description="content")
    def preview(self, obj: RecentMessage) -> str:
        from recent.messages import content_text

        return content_text(obj.data.get("content"))[:100]


@admin.register(RecentMeta)
class RecentMetaAdmin(admin.ModelAdmin):
    list_display = ("character", "last_past_block_update_at")


@admin.register(RawMessage)
class RawMessageAdmin(admin.ModelAdmin):
    list_display = ("character", "timestamp", "session_id", "preview")
    list_filter = ("character",)
    search_fields = ("session_id", "message")
    date_hierarchy = "timestamp"
    readonly_fields = ("character", "session_id", "message", "timestamp")

    @admin.display(description="message")
    def preview(self, obj: RawMessage) -> str:
        return obj.message[:100]


@admin.register(RecentReviewState)
class RecentReviewStateAdmin(admin.ModelAdmin):
    list_display = (
        "character",
        "cutoff_position",
        "last_started_at",
        "truncation_strikes",
        "paused_at_length",
    )
