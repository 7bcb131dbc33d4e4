"""The speaker-trust ledger in the admin: written only by the identity and trust routes and the
scoped writes (``groupchat.identity.services``), so every page is read-only."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from groupchat.identity.models import Account, ActivityEvent, Entity, TrustBarrier
from nekomem.admin import ServiceWrittenAdmin


class AccountInline(admin.TabularInline):
    model = Account
    fields = ("account_id", "platform", "tier", "is_owner", "bound_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Entity | None = None) -> bool:
        return False


@admin.register(Entity)
class EntityAdmin(ServiceWrittenAdmin):
    """One person, with the accounts folded into them (at most 8 per platform)."""

    list_display = ("entity_id", "accounts", "created_at")
    search_fields = ("entity_id", "accounts__account_id")
    date_hierarchy = "created_at"
    inlines = (AccountInline,)

    def get_queryset(self, request: HttpRequest) -> QuerySet[Entity]:
        return super().get_queryset(request).annotate(account_count=Count("accounts"))

    @admin.display(description="accounts", ordering="account_count")
    def accounts(self, obj: Entity) -> int:
        return getattr(obj, "account_count", 0)


@admin.register(Account)
class AccountAdmin(ServiceWrittenAdmin):
    list_display = (
        "account_id",
        "platform",
        "entity",
        "tier",
        "is_owner",
        "base_trust",
        "adjustment",
        "message_count",
        "updated_at",
    )
    list_filter = ("platform", "tier", "is_owner")
    search_fields = ("account_id", "entity__entity_id", "legacy_source")
    list_select_related = ("entity",)
    raw_id_fields = ("entity",)
    date_hierarchy = "updated_at"


@admin.register(ActivityEvent)
class ActivityEventAdmin(ServiceWrittenAdmin):
    """Activity already counted per account: a retry that grew never counts an event twice."""

    list_display = ("event_id", "account", "count", "recorded_at")
    search_fields = ("event_id", "account__account_id")
    list_select_related = ("account",)
    raw_id_fields = ("account",)
    date_hierarchy = "recorded_at"
    show_full_result_count = False  # one row per counted event: a long list is not counted


@admin.register(TrustBarrier)
class TrustBarrierAdmin(ServiceWrittenAdmin):
    """Per platform: whether the legacy trust profiles were imported (or waived) yet."""

    list_display = ("platform", "status", "source", "accounts", "skipped", "chunks", "changed_at")
    list_filter = ("status",)
    search_fields = ("platform", "source")
