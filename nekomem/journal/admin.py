from django.contrib import admin

from nekomem.journal.models import AppliedSentinel, Event, OutboxOp


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ("seq", "character", "type", "ts", "event_id")
    list_filter = ("type", "character")
    search_fields = ("event_id",)
    readonly_fields = ("seq", "event_id", "character", "type", "ts", "payload")
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


@admin.register(OutboxOp)
class OutboxOpAdmin(admin.ModelAdmin):
    list_display = (
        "op_id",
        "character",
        "type",
        "status",
        "attempts",
        "created_at",
        "done_at",
        "short_error",
    )
    list_filter = ("status", "type", "character")
    search_fields = ("op_id", "last_error")
    readonly_fields = ("op_id", "character", "type", "payload", "created_at", "updated_at", "done_at")
    date_hierarchy = "created_at"
    actions = ("requeue",)

    @admin.display(description="last error")
    def short_error(self, obj: OutboxOp) -> str:
        return obj.last_error[:80]

    @admin.action(description="Give dead-lettered ops a fresh set of attempts")
    def requeue(self, request, queryset):
        from nekomem.journal.services import outbox_op_enqueue

        ids = list(queryset.values_list("op_id", flat=True))
        queryset.update(status=OutboxOp.Status.PENDING, attempts=0, lease_until=None, done_at=None)
        for op_id in ids:
            outbox_op_enqueue(op_id=op_id)
