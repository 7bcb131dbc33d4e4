from django.contrib import admin

from facts.models import ExtractionCursor, Fact, FactDedupPair


@admin.register(Fact)
class FactAdmin(admin.ModelAdmin):
    list_display = (
        "fact_id",
        "character",
        "entity",
        "importance",
        "source",
        "absorbed",
        "archived",
        "created_at",
    )
    list_filter = ("character", "entity", "source", "absorbed", "signal_processed", "archived", "importance")
    search_fields = ("fact_id", "text", "hash")
    date_hierarchy = "created_at"
    readonly_fields = ("hash", "embedding", "embedding_text_sha256", "embedding_model_id", "updated_at")
    list_select_related = ("character",)


@admin.register(FactDedupPair)
class FactDedupPairAdmin(admin.ModelAdmin):
    list_display = (
        "character",
        "candidate",
        "existing",
        "cosine",
        "status",
        "attempts",
        "decision",
        "queued_at",
    )
    list_filter = ("character", "status", "decision")
    search_fields = ("candidate_text", "existing_text")


@admin.register(ExtractionCursor)
class ExtractionCursorAdmin(admin.ModelAdmin):
    list_display = (
        "character",
        "last_check_at",
        "last_a_message_at",
        "last_b_check_at",
        "a_success_count",
        "window_failures",
        "waiting_reason",
    )
    search_fields = ("character__name",)
