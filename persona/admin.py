"""Admin for the persona: state is owned by the services, so rows are read-only here and change only
through actions that call them."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from nekomem.errors import Conflict
from persona.models import PersonaArchiveShard, PersonaCorrection, PersonaEntry, PersonaSection, PersonaState
from persona.services import persona_correction_resolve, persona_entry_delete


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(PersonaEntry)
class PersonaEntryAdmin(ReadOnlyAdmin):
    list_display = ("entry_id", "character", "section", "protected", "suppress", "sub_zero_days", "text")
    list_filter = ("character", "section", "protected", "suppress", "source")
    search_fields = ("entry_id", "text")
    actions = ("delete_through_service",)

    @admin.action(description="Delete (not card entries)")
    def delete_through_service(self, request: HttpRequest, queryset: QuerySet[PersonaEntry]) -> None:
        done = refused = 0
        for entry in queryset:
            try:
                persona_entry_delete(character_id=entry.character_id, entry_id=entry.entry_id)
                done += 1
            except Conflict:
                refused += 1
        self.message_user(request, f"deleted {done}, refused {refused} card entries", messages.INFO)


@admin.register(PersonaCorrection)
class PersonaCorrectionAdmin(ReadOnlyAdmin):
    list_display = (
        "pk",
        "character",
        "entity",
        "old_text",
        "new_text",
        "resolve_attempts",
        "dropped_at",
        "created_at",
    )
    list_filter = ("character", "entity", ("dropped_at", admin.EmptyFieldListFilter))
    actions = ("keep_old", "keep_new", "keep_both")

    def _resolve(self, request: HttpRequest, queryset: QuerySet[PersonaCorrection], how: str) -> None:
        done = 0
        for correction in queryset:
            try:
                persona_correction_resolve(
                    character_id=correction.character_id, correction_pk=correction.pk, action=how
                )
                done += 1
            except Conflict:
                continue
        self.message_user(request, f"{how}: {done} resolved", messages.INFO)

    @admin.action(description="Keep the existing entry (drop the new observation)")
    def keep_old(self, request: HttpRequest, queryset: QuerySet[PersonaCorrection]) -> None:
        self._resolve(request, queryset, "keep_old")

    @admin.action(description="Replace the entry with the new observation")
    def keep_new(self, request: HttpRequest, queryset: QuerySet[PersonaCorrection]) -> None:
        self._resolve(request, queryset, "keep_new")

    @admin.action(description="Keep both")
    def keep_both(self, request: HttpRequest, queryset: QuerySet[PersonaCorrection]) -> None:
        self._resolve(request, queryset, "keep_both")


admin.site.register(PersonaSection, ReadOnlyAdmin)
admin.site.register(PersonaArchiveShard, ReadOnlyAdmin)
admin.site.register(PersonaState, ReadOnlyAdmin)
