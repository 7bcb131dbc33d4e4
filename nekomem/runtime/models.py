from __future__ import annotations

from django.db import models


class StorageState(models.Model):
    """Process-wide storage block flag, shared by every worker (one row, pk=1)."""

    blocked = models.BooleanField(default=False)
    reason = models.CharField(max_length=200, blank=True)
    # Bumped by /reload: a process that sees a new value drops its caches before serving.
    generation = models.PositiveBigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return "blocked" if self.blocked else "open"


class FeatureSwitch(models.Model):
    """The original's core_config.json switches, read hot on every check."""

    name = models.CharField(max_length=64, unique=True)
    enabled = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.name}={'on' if self.enabled else 'off'}"
