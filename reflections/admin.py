"""Admin for reflections: state is owned by the services, so it is shown read-only and changed only
through actions that call them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from nekomem.errors import Conflict
from reflections.models import ArchiveShard, Reflection, ReflectionCursor, SurfacedReflection
from reflections.services import reflection_archive, reflection_confirm, reflection_deny, reflection_restore


def _each(
    service: Callable[..., Reflection], verb: str
) -> Callable[[admin.ModelAdmin, HttpRequest, QuerySet[Reflection]], None]:
    def run(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet[Reflection]) -> None:
        done = refused = 0
        for reflection in queryset:
            try:
                service(character_id=reflection.character_id, reflection_id=reflection.reflection_id)
                done += 1
            except Conflict:
                refused += 1
        modeladmin.message_user(request, f"{verb}: {done} done, {refused} not applicable", messages.INFO)

    run.__name__ = f"action_{verb}"
    return run


@admin.register(Reflection)
class ReflectionAdmin(admin.ModelAdmin):
    list_display = (
        "reflection_id",
        "character",
        "entity",
        "status",
        "reinforcement",
        "disputation",
        "created_at",
    )
    list_filter = ("character", "status", "entity", "temporal_scope", "suppress")
    search_fields = ("reflection_id", "text")
    date_hierarchy = "created_at"
    list_select_related = ("character",)
    actions = [
        admin.action(description="Confirm")(_each(reflection_confirm, "confirm")),
        admin.action(description="Deny")(_each(reflection_deny, "deny")),
        admin.action(description="Archive into a shard")(_each(reflection_archive, "archive")),
        admin.action(description="Restore from the archive")(_each(reflection_restore, "restore")),
    ]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in Reflection._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(SurfacedReflection)
class SurfacedReflectionAdmin(admin.ModelAdmin):
    list_display = ("reflection_id", "character", "surfaced_at", "feedback", "handled")
    list_filter = ("character", "feedback", "handled")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [f.name for f in SurfacedReflection._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(ArchiveShard)
class ArchiveShardAdmin(admin.ModelAdmin):
    list_display = ("name", "character", "size", "created_at")
    readonly_fields = ("character", "name", "size", "created_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(ReflectionCursor)
class ReflectionCursorAdmin(admin.ModelAdmin):
    list_display = ("character", "rebuttal_checked_until")
    readonly_fields = ("character", "rebuttal_checked_until")
