"""The recent layer in the admin: browsable; the window is edited only through the memory browser
(``recent_window_replace``), and the raw log and the layer's state only by their services."""

from django.contrib import admin

from nekomem.admin import ServiceWrittenAdmin
from recent.models import (
    RawMessage,
    RecentJob,
    RecentMessage,
    RecentMeta,
    RecentReviewState,
    RecentWindowState,
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


@admin.register(RecentJob)
class RecentJobAdmin(admin.ModelAdmin):
    """Compression and review jobs: attempts, the last error, waiting and dead-lettered ones."""

    list_display = ("id", "character", "kind", "status", "attempts", "outcome", "short_error", "updated_at")
    list_filter = ("status", "kind", "character")
    search_fields = ("last_error",)
    readonly_fields = (
        "character",
        "kind",
        "attempts",
        "last_error",
        "outcome",
        "run_token",
        "lease_until",
        "created_at",
        "updated_at",
        "finished_at",
    )
    actions = ("retry",)

    @admin.display(description="last error")
    def short_error(self, obj: RecentJob) -> str:
        return obj.last_error[:80]

    @admin.action(description="Give dead-lettered or failed jobs a fresh set of attempts")
    def retry(self, request, queryset):
        from recent.jobs import recent_job_enqueue

        retried = queryset.filter(status__in=[RecentJob.Status.DEAD, RecentJob.Status.FAILED])
        jobs = list(retried.values_list("pk", "kind"))
        retried.update(status=RecentJob.Status.PENDING, attempts=0, lease_until=None, finished_at=None)
        for job_id, kind in jobs:
            recent_job_enqueue(job_id=job_id, kind=kind)


@admin.register(RecentReviewState)
class RecentReviewStateAdmin(ServiceWrittenAdmin):
    list_display = (
        "character",
        "cutoff_position",
        "last_started_at",
        "truncation_strikes",
        "paused_at_length",
    )
