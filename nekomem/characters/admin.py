"""Characters in the admin: the fields the REST API edits, checked by the API's own serializer."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.utils import timezone

from nekomem.admin import ServiceWrittenAdmin
from nekomem.characters.api import CharacterSerializer
from nekomem.characters.models import Character, CharacterRelease, MemoryChange
from nekomem.characters.names import InvalidCharacterName, validate_character_name
from nekomem.characters.selectors import RELEASE_HOLD_STALE

# What a person edits (``CharacterSerializer``'s writable fields); the rest is written by services.
EDITABLE_CHARACTER_FIELDS = ("name", "master_name", "master_nicknames", "card")


class CharacterAdminForm(forms.ModelForm):
    class Meta:
        model = Character
        fields = EDITABLE_CHARACTER_FIELDS

    def clean_name(self) -> str:
        try:
            return validate_character_name(self.cleaned_data["name"])
        except InvalidCharacterName as exc:
            raise forms.ValidationError(str(exc)) from exc

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        # The name was checked above; uniqueness is the model form's own check.
        checked = CharacterSerializer(
            instance=self.instance if self.instance.pk else None,
            data={
                name: cleaned[name]
                for name in EDITABLE_CHARACTER_FIELDS
                if name in cleaned and name != "name"
            },
            partial=True,
        )
        if not checked.is_valid():
            for name, errors in checked.errors.items():
                self.add_error(name if name in self.fields else None, errors)
        return cleaned


@admin.register(Character)
class CharacterAdmin(admin.ModelAdmin):
    form = CharacterAdminForm
    list_display = ("name", "master_name", "language", "last_activity_at", "created_at")
    search_fields = ("name", "master_name")
    list_filter = ("language",)
    readonly_fields = ("language", "created_at", "last_activity_at", "memory_version")

    def get_readonly_fields(self, request: Any, obj: Character | None = None) -> tuple[str, ...]:
        # A rename is more than the column: every process's caches and the saved recall indexes
        # follow it (``character_rename``, from the memory browser or the REST API).
        return (*self.readonly_fields, "name") if obj is not None else self.readonly_fields

    fieldsets = (
        (None, {"fields": ("name", "language")}),
        ("Character card", {"fields": ("master_name", "master_nicknames", "card")}),
        ("State", {"fields": ("last_activity_at", "created_at", "memory_version")}),
    )


@admin.register(MemoryChange)
class MemoryChangeAdmin(ServiceWrittenAdmin):
    """The recall caches' change log: which rows each ``memory_version`` bump touched."""

    list_display = ("character", "version", "pool", "row", "vector_only")
    list_filter = ("pool", "vector_only")
    search_fields = ("character__name",)
    list_select_related = ("character",)
    # One row per bump: a long log is counted only when a filter narrows it.
    show_full_result_count = False


@admin.register(CharacterRelease)
class CharacterReleaseAdmin(ServiceWrittenAdmin):
    """A ``/release_character`` in progress: while its row is fresh the character's writes answer 409.
    A stale row (a crashed release) is ignored by the fence and shown as such here."""

    list_display = ("name", "started_at", "fencing")
    search_fields = ("name",)
    date_hierarchy = "started_at"

    @admin.display(description="fences writes", boolean=True)
    def fencing(self, obj: CharacterRelease) -> bool:
        return obj.started_at >= timezone.now() - RELEASE_HOLD_STALE
