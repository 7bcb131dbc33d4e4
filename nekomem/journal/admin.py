from collections.abc import Callable
from typing import Any

from django.contrib import admin

from nekomem.journal.jobs import job_retry
from nekomem.journal.models import AppliedSentinel, DurableWork, Event, Job, OutboxOp, WorkStatus
from nekomem.journal.services import outbox_op_retry


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ("seq", "character", "type", "ts", "cause", "source", "layer", "row")
    list_filter = ("type", "cause", "layer", "character")
    search_fields = ("event_id", "source", "row")
    readonly_fields = (
        "seq",
        "event_id",
        "character",
        "type",
        "ts",
        "cause",
        "source",
        "layer",
        "row",
        "payload",
    )
    date_hierarchy = "ts"

    def has_add_permission(self, request):  # the log is append-only through services
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(AppliedSentinel)
class AppliedSentinelAdmin(admin.ModelAdmin):
    list_display = ("character", "last_applied_seq", "last_applied_event_id", "ts")
    readonly_fields = ("character", "last_applied_seq", "last_applied_event_id", "ts")

    def has_add_permission(self, request):
        return False


class DurableWorkAdmin(admin.ModelAdmin):
    """Durable work is written by services only: the admin shows it and retries what is dead."""

    date_hierarchy = "created_at"
    actions = ("retry",)
    retry_one: Callable[[Any], bool]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="last error")
    def short_error(self, obj: DurableWork) -> str:
        return obj.last_error[:80]

    @admin.action(description="Retry dead ones with a fresh set of attempts", permissions=["view"])
    def retry(self, request, queryset):
        ids = list(queryset.filter(status=WorkStatus.DEAD).values_list("pk", flat=True))
        retried = sum(type(self).retry_one(pk) for pk in ids)
        self.message_user(request, f"{retried} of {len(ids)} dead item(s) retried.")


@admin.register(OutboxOp)
class OutboxOpAdmin(DurableWorkAdmin):
    list_display = (
        "op_id",
        "character",
        "type",
        "status",
        "attempts",
        "waiting_reason",
        "created_at",
        "finished_at",
        "short_error",
    )
    list_filter = ("status", "type", "character")
    search_fields = ("op_id", "last_error")

    @staticmethod
    def retry_one(pk: Any) -> bool:
        return outbox_op_retry(op_id=pk)


@admin.register(Job)
class JobAdmin(DurableWorkAdmin):
    """Every layer's background jobs: attempts, why one waits, dead-lettered ones and their retry."""

    list_display = (
        "id",
        "kind",
        "character",
        "status",
        "attempts",
        "waiting_reason",
        "next_attempt_at",
        "outcome",
        "short_error",
        "updated_at",
    )
    list_filter = ("kind", "status", "waiting_reason", "character")
    search_fields = ("last_error", "kind")

    @staticmethod
    def retry_one(pk: Any) -> bool:
        return job_retry(job_id=pk)
