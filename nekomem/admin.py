"""What every layer's admin shares: the admin writes only through services."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest


class ServiceWrittenAdmin(admin.ModelAdmin):
    """For rows that only services may write (they keep the lock, the event log and the recall
    version in step): browsable here, never added, changed or deleted."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
