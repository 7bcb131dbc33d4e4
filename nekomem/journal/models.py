from __future__ import annotations

import uuid

from django.db import models

from nekomem.characters.models import Character
from nekomem.journal.events import JOURNAL_EVENT_TYPES, VERSION_EVENT


class Event(models.Model):
    """One state change, appended in the same transaction as the view change it describes.

    Payloads are full snapshots, so replaying an event twice gives the same state.
    """

    seq = models.BigAutoField(primary_key=True)
    event_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    # No index of its own: the (character, seq) index serves every lookup by character, and each index
    # is one more page every event's insert (a version rides on each memory write) dirties.
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="events", db_index=False)
    type = models.CharField(max_length=40, choices=[(t, t) for t in JOURNAL_EVENT_TYPES])
    ts = models.DateTimeField()
    payload = models.JSONField(default=dict)
    # Written by compaction from the current views (reference §2.14): what the log holds in place of
    # the events it dropped. Seeds do not count towards the next compaction.
    seed = models.BooleanField(default=False)
    # Why the change happened (nekomem.journal.causes): the mechanism, and the job, pass or request.
    cause = models.CharField(max_length=24, blank=True, default="")
    source = models.CharField(max_length=80, blank=True, default="")
    # A version event's row: the layer's history name and the row's public id (empty otherwise).
    layer = models.CharField(max_length=16, blank=True, default="")
    row = models.CharField(max_length=120, blank=True, default="")

    class Meta:
        ordering = ["seq"]
        indexes = [
            # Replay, compaction, and the history's timeline (newest first by seq; its time, layer and
            # cause filters ride on this scan over versions the retention keeps bounded).
            models.Index(fields=["character", "seq"]),
            # The two history reads a scan would not do: a row's versions, and an undo's rows by source.
            # Partial, so the original's events pay for neither.
            models.Index(
                fields=["character", "layer", "row", "seq"],
                condition=models.Q(type=VERSION_EVENT),
                name="event_row_versions",
            ),
            models.Index(
                fields=["character", "source"],
                condition=models.Q(type=VERSION_EVENT),
                name="event_version_source",
            ),
        ]

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


class WorkStatus(models.TextChoices):
    PENDING = "pending"  # due now: enqueued, or the sweep will enqueue it
    RUNNING = "running"  # claimed by a worker until lease_until
    WAITING = "waiting"  # not due until waiting_reason clears (a provider appears, the back-off ends)
    DONE = "done"
    DEAD = "dead"  # spent its attempts; stays visible until retried


class DurableWork(models.Model):
    """What every piece of durable background work carries: the fields the kernel's job mechanism
    (``nekomem.journal.jobs``) claims, retries, parks and dead-letters, whichever table holds it."""

    ACTIVE = (WorkStatus.PENDING, WorkStatus.RUNNING, WorkStatus.WAITING)

    status = models.CharField(max_length=8, choices=WorkStatus.choices, default=WorkStatus.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    waiting_reason = models.CharField(
        max_length=60, blank=True, default="", help_text="Machine-readable: no_provider:<tier>, backoff …"
    )
    next_attempt_at = models.DateTimeField(
        null=True, blank=True, help_text="When waiting work is due again (none: when its reason clears)."
    )
    last_error = models.TextField(blank=True, help_text="Exception type and metadata; never memory text.")
    run_token = models.UUIDField(
        null=True, blank=True, help_text="Changes on every claim, so a stale run cannot finish a newer one."
    )
    lease_until = models.DateTimeField(
        null=True, blank=True, help_text="A worker holds the work until then; an expired lease is re-run."
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


class OutboxOp(DurableWork):
    """A replayable background operation registered in the same transaction as its cause.

    It keeps a table of its own (the single-statement turn write inserts into it, and its payload
    carries the turn's messages); its retries, lease and dead letter are the job mechanism's.
    """

    Status = WorkStatus

    op_id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # No index of its own: the (character, status) index serves every lookup by character.
    character = models.ForeignKey(
        Character, on_delete=models.CASCADE, related_name="outbox_ops", db_index=False
    )
    type = models.CharField(max_length=40)
    payload = models.JSONField(default=dict)
    # Two post-turn steps are counts (mentions, the keyword hook's disputation): a retry after a later
    # step failed or waited must not apply them again, so the steps that succeeded are kept here and
    # skipped by every later run of the op.
    steps_done = models.JSONField(
        default=list, blank=True, help_text="Names of the steps that succeeded; a retry skips them."
    )

    class Meta:
        ordering = ["created_at"]
        indexes = [
            models.Index(fields=["status", "created_at"]),
            models.Index(fields=["character", "status"]),
        ]

    def __str__(self) -> str:
        return f"{self.type} {self.op_id} ({self.status})"


class Job(DurableWork):
    """One piece of a layer's durable background work (a compression, a review …).

    ``kind`` names a handler a layer registered (``nekomem.journal.jobs.register_job_kind``); the
    payload holds ids only, never memory text. At most one job of a (character, kind, key) is active.
    """

    Status = WorkStatus

    kind = models.CharField(max_length=60)
    character = models.ForeignKey(Character, on_delete=models.CASCADE, related_name="jobs", db_index=False)
    key = models.CharField(
        max_length=80, blank=True, default="", help_text="Tells apart active jobs of one kind and character."
    )
    payload = models.JSONField(default=dict, blank=True, help_text="Ids only.")
    outcome = models.CharField(
        max_length=40, blank=True, help_text="What the last run did (spliced, moot …)."
    )
    probed_at = models.DateTimeField(
        null=True, blank=True, help_text="When the self-heal probe last gave the dead job one more run."
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["character", "kind", "key"],
                condition=models.Q(status__in=["pending", "running", "waiting"]),
                name="job_one_active_per_key",
            )
        ]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="job_status_due"),
            models.Index(fields=["character", "kind", "status"], name="job_character_kind"),
            # The memory browser's jobs page: a character's jobs newest first, a page at a time.
            models.Index(fields=["character", "created_at", "id"], name="job_character_newest"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"
