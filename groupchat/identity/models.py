"""The speaker-trust ledger: entities, their accounts, each account's activity events, and the
per-platform barrier that holds server-derived trust back until the legacy profiles are in."""

from __future__ import annotations

from django.db import models

ACCOUNT_ID_MAX = 96
PLATFORM_MAX = 64


class Entity(models.Model):
    """One person; their accounts fold into one participant per platform."""

    entity_id = models.CharField(max_length=40, unique=True)
    created_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.entity_id


class Account(models.Model):
    """One speaker account (``<platform>:<actor>``) and its trust ledger."""

    class Tier(models.TextChoices):
        ADMIN = "admin"
        TRUSTED = "trusted"
        NORMAL = "normal"
        NONE = "none"

    account_id = models.CharField(max_length=ACCOUNT_ID_MAX, unique=True)
    platform = models.CharField(max_length=PLATFORM_MAX)
    entity = models.ForeignKey(Entity, on_delete=models.PROTECT, related_name="accounts")
    bound_at = models.DateTimeField(help_text="When the account joined its entity (the first is canonical).")
    tier = models.CharField(max_length=8, choices=Tier.choices, blank=True, default="")
    base_trust = models.FloatField(null=True, blank=True, help_text="Reported base, clamped to 0.8.")
    is_owner = models.BooleanField(default=False)
    adjustment = models.FloatField(default=0.0, help_text="Legacy adjustment, summed, never clamped.")
    message_count = models.PositiveIntegerField(default=0, help_text="Activity counted once per event id.")
    channels = models.JSONField(default=list, blank=True, help_text="Transports the account was seen on.")
    legacy_source = models.CharField(max_length=128, blank=True, default="")
    legacy_imported_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["entity", "platform"], name="account_entity_platform")]

    def __str__(self) -> str:
        return self.account_id


class ActivityEvent(models.Model):
    """An activity event already counted for an account: a grown retry never counts it twice."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="activity_events")
    event_id = models.CharField(max_length=96)
    count = models.PositiveIntegerField()
    recorded_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["account", "event_id"], name="activity_event_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.event_id} ×{self.count}"


class TrustBarrier(models.Model):
    """A platform whose legacy trust profiles must be imported (or waived) before the server evolves
    its accounts' trust; without a row a seeded platform is pending (``trust.LEGACY_BARRIERS``)."""

    class Status(models.TextChoices):
        PENDING = "pending"
        CLEARED = "cleared"
        WAIVED = "waived"

    platform = models.CharField(max_length=PLATFORM_MAX, unique=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    source = models.CharField(max_length=128, blank=True, default="")
    accounts = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    chunks = models.PositiveIntegerField(default=0)
    changed_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.platform}: {self.status}"
