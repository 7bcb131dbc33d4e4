"""The facts layer in the admin. Every write goes through the services the REST API calls."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from facts.models import ExtractionCursor, Fact, FactDedupPair, FactToken
from facts.services import fact_delete, fact_update
from nekomem.admin import ServiceWrittenAdmin

# What the REST API lets a person edit (``FactEditSerializer``); everything else is the services'.
EDITABLE_FACT_FIELDS = ("text", "importance", "entity")


@admin.register(Fact)
class FactAdmin(admin.ModelAdmin):
    """Facts are edited and deleted as the REST API does it: under the character's lock, with the
    dedup index and vector reset on a new text, and the recall version bumped so every server
    process drops its cached index. Facts are added only by extraction and import."""

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
    list_select_related = ("character",)

    def get_readonly_fields(self, request: HttpRequest, obj: Fact | None = None) -> list[str]:
        return [
            f.name
            for f in Fact._meta.concrete_fields
            if not f.primary_key and f.name not in EDITABLE_FACT_FIELDS
        ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Fact, form: Any, change: bool) -> None:
        fact_update(
            character_id=obj.character_id,
            fact_id=obj.fact_id,
            **{name: form.cleaned_data[name] for name in EDITABLE_FACT_FIELDS if name in form.changed_data},
        )
        obj.refresh_from_db()  # the form's instance, as the service left it (for the change log)

    def delete_model(self, request: HttpRequest, obj: Fact) -> None:
        fact_delete(character_id=obj.character_id, fact_id=obj.fact_id)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Fact]) -> None:
        for character_id, fact_id in queryset.values_list("character_id", "fact_id"):
            fact_delete(character_id=character_id, fact_id=fact_id)


@admin.register(FactDedupPair)
class FactDedupPairAdmin(ServiceWrittenAdmin):
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


@admin.register(ExtractionCursor)
class ExtractionCursorAdmin(ServiceWrittenAdmin):
    list_display = (
        "character",
        "last_check_at",
        "last_a_message_at",
        "last_b_check_at",
        "a_success_count",
    )  # a failing or waiting window shows as a facts.extraction job
    search_fields = ("character__name",)


@admin.register(FactToken)
class FactTokenAdmin(ServiceWrittenAdmin):
    """The near-duplicate layer's inverted index (derived from each fact's tokens)."""

    list_display = ("fact", "character", "token", "size")
    search_fields = ("token", "fact__fact_id")
    list_select_related = ("character", "fact")
    raw_id_fields = ("fact",)
    # Tens of rows per fact: the changelist does not count them all.
    show_full_result_count = False
