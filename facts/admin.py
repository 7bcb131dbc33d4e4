from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from facts.models import ExtractionCursor, Fact, FactDedupPair
from facts.services.editing import fact_text_set


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
    readonly_fields = (
        "hash",
        "embedding",
        "embedding_text_sha256",
        "embedding_model_id",
        "dedup_tokens",
        "dedup_key",
        "updated_at",
    )
    list_select_related = ("character",)

    def save_model(self, request: HttpRequest, obj: Fact, form: Any, change: bool) -> None:
        if change and "text" in form.changed_data:
            # Through the same rules as an API edit: new hash, vector dropped, dedup index re-read.
            fact_text_set(fact=obj, text=obj.text)
        super().save_model(request, obj, form, change)


@admin.register(FactDedupPair)
class FactDedupPairAdmin(admin.ModelAdmin):
    """The arbitration queue and, once resolved, the record of each decision.

    A ``merge``/``replace`` deletes one fact; the pair keeps both ids and texts (the deleted side's
    link is empty) and the text that survived.
    """

    list_display = (
        "character",
        "candidate_fact_id",
        "existing_fact_id",
        "cosine",
        "status",
        "decision",
        "queued_at",
        "resolved_at",
    )
    list_filter = ("character", "status", "decision")
    search_fields = (
        "candidate_fact_id",
        "existing_fact_id",
        "candidate_text",
        "existing_text",
        "merged_text",
    )
    list_select_related = ("character",)
    raw_id_fields = ("candidate", "existing")
    readonly_fields = (
        "candidate_fact_id",
        "existing_fact_id",
        "candidate_text",
        "existing_text",
        "decision",
        "merged_text",
        "resolved_at",
    )


@admin.register(ExtractionCursor)
class ExtractionCursorAdmin(admin.ModelAdmin):
    list_display = (
        "character",
        "last_check_at",
        "last_a_message_at",
        "last_b_check_at",
        "a_success_count",
    )  # a failing or waiting window shows as a facts.extraction job
    search_fields = ("character__name",)
