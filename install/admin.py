"""The install folder's bookkeeping in the admin: written only by the folder sync
(``install.folder``), so every page is read-only. A refused file shows why."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from install.models import FolderCharacter, FolderFile, FolderState
from nekomem.admin import ServiceWrittenAdmin


class RefusedFilter(admin.SimpleListFilter):
    title = "taken in"
    parameter_name = "refused"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("no", "taken in"), ("yes", "refused")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[FolderFile]) -> QuerySet[FolderFile]:
        if self.value() == "yes":
            return queryset.exclude(refused="")
        if self.value() == "no":
            return queryset.filter(refused="")
        return queryset


@admin.register(FolderFile)
class FolderFileAdmin(ServiceWrittenAdmin):
    list_display = ("name", "filename", "size", "present", "refused_short", "refused_at", "updated_at")
    list_filter = (RefusedFilter, "filename")
    search_fields = ("name", "filename", "sha256")
    ordering = ("name", "filename")

    @admin.display(description="on disk", boolean=True)
    def present(self, obj: FolderFile) -> bool:
        return bool(obj.sha256)

    @admin.display(description="refused")
    def refused_short(self, obj: FolderFile) -> str:
        return obj.refused[:80]


@admin.register(FolderCharacter)
class FolderCharacterAdmin(ServiceWrittenAdmin):
    list_display = ("name", "stamp", "vanished_at")
    search_fields = ("name",)


@admin.register(FolderState)
class FolderStateAdmin(ServiceWrittenAdmin):
    """One row: the first-start migration's progress and the folder sync's last pass."""

    list_display = (
        "root",
        "migration",
        "migration_done",
        "migration_total",
        "migration_current",
        "migration_finished_at",
        "last_pass_at",
    )
