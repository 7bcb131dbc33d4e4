"""The process-wide switches in the admin: shown, and changed only through their services (the
storage block through ``/storage/...`` and the memory browser, switches through ``switch_set``)."""

from __future__ import annotations

from django.contrib import admin

from nekomem.admin import ServiceWrittenAdmin
from nekomem.runtime.models import FeatureSwitch, StorageState


@admin.register(StorageState)
class StorageStateAdmin(ServiceWrittenAdmin):
    list_display = ("__str__", "blocked", "reason", "generation", "updated_at")


@admin.register(FeatureSwitch)
class FeatureSwitchAdmin(ServiceWrittenAdmin):
    list_display = ("name", "enabled", "updated_at")
    list_filter = ("enabled",)
    search_fields = ("name",)
