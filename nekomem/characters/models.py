from __future__ import annotations

from typing import Any

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
    language = models.CharField(
        max_length=16,
        blank=True,
        help_text="The character's durable prompt locale: the last explicit supported language a request "
        "or the language page chose (reference §1.7). Empty: none chosen yet.",
    )
    language_order = models.BigIntegerField(
        default=0,
        help_text="Arrival stamp of the choice stored in ``language``; a choice is stored only over an "
        "older stamp, compared in the database, so a request that arrived earlier and finishes late never "
        "overrides a newer choice.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField(null=True, blank=True)
    memory_version = models.PositiveBigIntegerField(
        default=0, help_text="Bumped by every change to recallable memory; recall caches key on it."
    )
    raw_rows_written = models.PositiveBigIntegerField(
        default=0,
        help_text="Raw-log rows ever written for this character, counted in the transaction that writes "
        "them: a recall cache that has read as many has every raw turn.",
    )

    forgotten_version = models.PositiveBigIntegerField(
        default=0,
        help_text="The memory_version of the last deletion (a forgotten row): a saved recall index older "
        "than it may hold the forgotten text and is dropped, never loaded.",
    )

    # Counters that services bump with F() in the writer's own transaction (recall caches compare them).
    # A save of an instance read earlier (the admin's form, the API's update) must not write back the
    # value it read: a count gone back would make a cache take a later count for one it has seen.
    SERVICE_COUNTERS = ("memory_version", "raw_rows_written", "forgotten_version")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding and kwargs.get("update_fields") is None:
            kwargs["update_fields"] = [
                f.name
                for f in self._meta.concrete_fields
                if not f.primary_key and f.name not in self.SERVICE_COUNTERS
            ]
        super().save(*args, **kwargs)

    @property
    def stop_names(self) -> list[str]:
        names = [self.name, self.master_name, *self.master_nicknames]
        return [n for n in names if n]


class MemoryChange(models.Model):
    """Which recallable rows one ``memory_version`` bump touched: the delta recall caches apply.

    Every bump writes at least one row, so a reader at version v that sees versions v+1..w in the log
    has missed nothing (a gap means the log was pruned: rebuild). ``pool`` empty means "anything may
    have changed" (an import); ``row`` empty with a pool means a bump with no recall-visible row.
    """

    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="+", db_index=False)
    version = models.PositiveBigIntegerField()
    pool = models.CharField(max_length=16, blank=True)
    row = models.BigIntegerField(null=True, blank=True)
    vector_only = models.BooleanField(default=False, help_text="Only the row's cached vector changed.")

    class Meta:
        indexes = [models.Index(fields=["character", "version"], name="memory_change_since")]

    def __str__(self) -> str:
        return f"{self.character_id}@{self.version}:{self.pool}:{self.row}"


class CharacterRelease(models.Model):
    """A ``/release_character`` in progress (reference §1.7): while the row exists, writes that the
    original fences (the Markdown import among them) answer 409. A row in the database, not process
    memory, so every worker sees it; keyed by name because a character may be released before it exists
    here. A row older than ``characters.services.RELEASE_HOLD_STALE`` is a crashed release and ignored."""

    name = models.CharField(max_length=64, unique=True)
    started_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"release {self.name} @ {self.started_at}"
