from __future__ import annotations

import uuid

from django.db import models

from nekomem.characters.models import Character
from nekomem.journal.events import EVENT_TYPES


class Event(models.Model):
    """One state change, appended in the same transaction as the view change it describes.

    Payloads are full snapshots, so replaying an event twice gives the same state.
    """

    seq = models.BigAutoField(primary_key=True)
    event_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="events")
    type = models.CharField(max_length=40, choices=[(t, t) for t in EVENT_TYPES])
    ts = models.DateTimeField()
    payload = models.JSONField(default=dict)

    class Meta:
        ordering = ["seq"]
        indexes = [models.Index(fields=["character", "seq"])]

    def __str__(self) -> str:
        return f"{self.type} {self.event_id}"


class AppliedSentinel(models.Model):
    """How far a character's event log has been applied to its views (``events_applied.json``)."""

    character = models.OneToOneField(Character, on_delete=models.CASCADE, related_name="applied_sentinel")
    last_applied_seq = models.BigIntegerField(null=True, blank=True)
    last_applied_event_id = models.UUIDField(null=True, blank=True)
    ts = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.character.name}: {self.last_applied_event_id}"


class OutboxOp(models.Model):
    """A replayable background operation registered in the same transaction as its cause."""

    class Status(models.TextChoices):
        PENDING = "pending"
        DONE = "done"
        DEAD = "dead"

    op_id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No index of its own: the (character, status) index serves every lookup by character.
    character = models.ForeignKey(
        Character, on_delete=models.CASCADE, related_name="outbox_ops", db_index=False
    )
    type = models.CharField(max_length=40)
    payload = models.JSONField(default=dict)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    done_at = models.DateTimeField(null=True, blank=True)
    lease_until = models.DateTimeField(
        null=True, blank=True, help_text="A worker holds the op until then; expired leases are re-run."
    )

    class Meta:
        ordering = ["created_at"]
        indexes = [
            models.Index(fields=["status", "created_at"]),
            models.Index(fields=["character", "status"]),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.op_id} ({self.status})"
