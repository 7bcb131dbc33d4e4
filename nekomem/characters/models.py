from __future__ import annotations

from django.db import models


class Character(models.Model):
    """One companion (the original's ``lanlan_name``); every memory row belongs to one."""

    name = models.CharField(max_length=64, unique=True)
    master_name = models.CharField(
        max_length=64, blank=True, help_text="What the character calls the person behind it."
    )
    master_nicknames = models.JSONField(default=list, blank=True)
    card = models.JSONField(
        default=dict,
        blank=True,
        help_text='Character-card fields per entity, e.g. {"master": {"昵称": "阿凛"}, "neko": {...}}. '
        "They become protected persona entries.",
    )
    language = models.CharField(max_length=16, blank=True, help_text="Last locale the chat server sent.")
    created_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField(null=True, blank=True)
    memory_version = models.PositiveBigIntegerField(
        default=0, help_text="Bumped by every change to recallable memory; recall caches key on it."
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def stop_names(self) -> list[str]:
        names = [self.name, self.master_name, *self.master_nicknames]
        return [n for n in names if n]
