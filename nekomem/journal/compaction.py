"""What only grows is trimmed: the event log and the outbox compacted per character (reference
§2.13–2.14), old versions of the history pruned, and done jobs and django-q2 task results dropped
after their retention (issue 35).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Max, Min, OuterRef, QuerySet, Subquery, Window
from django.db.models.functions import RowNumber
from django.utils import timezone
from django_q.models import Task

from nekomem.characters.locks import lock_character
from nekomem.journal.events import VERSION_EVENT, check_event_type
from nekomem.journal.models import AppliedSentinel, Event, Job, OutboxOp, WorkStatus
from nekomem.journal.registry import (
    event_row_keys,
    event_seeders,
    live_row_keys,
)
from nekomem.journal.services import _sentinel_advance

logger = logging.getLogger(__name__)
# Compaction looks again at a log once this many events were appended since the last seeds, or once an
# event is older than the history's retention (the original's 90 days by default); it drops only the
# events past the retention that are not among the last versions of a live row.
EVENTS_COMPACT_LINES = 10_000
EVENTS_COMPACT_AGE = timedelta(days=90)
# A live row keeps at least this many versions in the journal, however old (issue 49).
HISTORY_KEEP_VERSIONS = 5
# Versions kept past the retention are looked at again this often (a row's newer versions, a shorter
# retention, or its deletion may free them).
HISTORY_RESCAN = timedelta(days=1)
# Done ops are dropped once a character's outbox holds this many ops (the file's ≥1000 lines), or
# once the oldest done op is this old; pending, running, waiting and dead ones stay.
OUTBOX_COMPACT_LINES = 1_000
OUTBOX_COMPACT_AGE = EVENTS_COMPACT_AGE


@dataclass(frozen=True)
class CompactReport:
    events_dropped: int = 0
    seeds: int = 0
    ops_dropped: int = 0


def journal_compact(*, character_id: int, now: datetime | None = None) -> CompactReport:
    """Compact one character's event log and outbox when they are due (the journal schedule's tick)."""
    now = now or timezone.now()
    dropped, seeds = events_compact(character_id=character_id, now=now)
    return CompactReport(
        events_dropped=dropped, seeds=seeds, ops_dropped=outbox_compact(character_id=character_id, now=now)
    )


def history_retention() -> timedelta:
    """How long every version of a row stays in the journal (``NEKOMEM_HISTORY_RETENTION_DAYS``)."""
    return timedelta(days=settings.HISTORY_RETENTION_DAYS)


def _compaction_due(*, character_id: int, now: datetime, cutoff: datetime, retention: timedelta) -> bool:
    """An event past the retention that the last compaction did not see past it yet, or
    ``EVENTS_COMPACT_LINES`` events since the last seeds (rows that gained versions since may free
    older ones). Events the last compaction kept as a live row's last versions do not make it due, but
    once ``HISTORY_RESCAN`` after it any event past the retention does (the retention may have been
    shortened since)."""
    events = Event.objects.filter(character_id=character_id).exclude(type=VERSION_EVENT)
    last_seed = events.filter(seed=True).aggregate(seq=Max("seq"), ts=Max("ts"))
    logged = events.filter(seed=False)
    if last_seed["seq"] is not None:
        since = logged.filter(seq__gt=last_seed["seq"])
        if since.count() >= EVENTS_COMPACT_LINES:
            return True
        if last_seed["ts"] > now - HISTORY_RESCAN:
            logged = logged.filter(ts__gt=last_seed["ts"] - retention)
    return logged.filter(ts__lte=cutoff).exists()


def _protected_versions(*, character_id: int) -> set[int]:
    """The last ``HISTORY_KEEP_VERSIONS`` events of every live row of the character."""
    live = live_row_keys(character_id)
    kept: dict[str, int] = {}
    protected: set[int] = set()
    versions = (
        Event.objects.filter(character_id=character_id, seed=False)
        .exclude(type=VERSION_EVENT)
        .order_by("-seq")
    )
    for pk, event_type, payload in versions.values_list("pk", "type", "payload").iterator(chunk_size=2000):
        for row in event_row_keys(event_type, payload):
            if row in live and kept.get(row, 0) < HISTORY_KEEP_VERSIONS:
                kept[row] = kept.get(row, 0) + 1
                protected.add(pk)
    return protected


def versions_prune(*, character_id: int, cutoff: datetime) -> int:
    """Drop the character's row versions older than ``cutoff``, except each row's last
    ``HISTORY_KEEP_VERSIONS`` (a deleted row's too: its last versions are what an undo reads)."""
    versions = Event.objects.filter(character_id=character_id, type=VERSION_EVENT)
    if not versions.filter(ts__lte=cutoff).exists():
        return 0
    ranked = versions.annotate(
        newer=Window(RowNumber(), partition_by=[F("layer"), F("row")], order_by=F("seq").desc())
    ).values_list("pk", "newer", "ts")
    doomed = [pk for pk, newer, ts in ranked if newer > HISTORY_KEEP_VERSIONS and ts <= cutoff]
    dropped = 0
    for start in range(0, len(doomed), RETENTION_BATCH):
        dropped += Event.objects.filter(pk__in=doomed[start : start + RETENTION_BATCH]).delete()[0]
    return dropped


def events_compact(*, character_id: int, now: datetime | None = None, force: bool = False) -> tuple[int, int]:
    """Drop the character's events older than the history's retention (``history_retention``), except
    the last ``HISTORY_KEEP_VERSIONS`` of each live row, and write seeds derived from its current views
    in place of what was dropped (reference §2.14, bounded by the retention: a version younger than it
    is never dropped, whatever the log's length). The previous seeds go: the new ones stand for the
    same views. Returns (events dropped, seeds written); ``force``: now, seeds even if nothing is old.

    Only a log whose every event is applied is compacted: an event still waiting for replay (a paused
    reconcile) is not in the views yet, so the seeds could not stand for it. The sentinel moves to the
    last seed, which the views hold already."""
    now = now or timezone.now()
    retention = history_retention()
    cutoff = now - retention
    versions_prune(character_id=character_id, cutoff=cutoff)
    # Versions are the history, pruned above by its retention: the log compaction neither counts nor
    # drops them.
    journal = Event.objects.filter(character_id=character_id).exclude(type=VERSION_EVENT)
    if not journal.filter(seed=False).exists():
        return 0, 0
    if not (force or _compaction_due(character_id=character_id, now=now, cutoff=cutoff, retention=retention)):
        return 0, 0
    with transaction.atomic():
        lock_character(character_id)
        last = journal.aggregate(last=Max("seq"))["last"]
        sentinel = AppliedSentinel.objects.filter(character_id=character_id).first()
        if last is None or sentinel is None or (sentinel.last_applied_seq or 0) < last:
            return 0, 0
        protected = _protected_versions(character_id=character_id)
        old = journal.filter(seed=False, ts__lte=cutoff, seq__lte=last)
        doomed = [pk for pk in old.values_list("pk", flat=True) if pk not in protected]
        if not (doomed or force):
            return 0, 0
        seeds = [
            Event(
                character_id=character_id,
                type=check_event_type(event_type),
                ts=now,
                payload=payload,
                seed=True,
                cause="compaction",
            )
            for seeder in event_seeders()
            for event_type, payload in seeder(character_id)
        ]
        dropped = 0
        for start in range(0, len(doomed), RETENTION_BATCH):
            dropped += Event.objects.filter(pk__in=doomed[start : start + RETENTION_BATCH]).delete()[0]
        dropped += journal.filter(seed=True, seq__lte=last).delete()[0]
        Event.objects.bulk_create(seeds, batch_size=1000)
        newest = journal.order_by("-seq").first()
        if newest is not None:
            _sentinel_advance(character_id=character_id, event=newest)
        else:  # nothing to seed: as the original, the sentinel points at no event
            AppliedSentinel.objects.filter(pk=sentinel.pk).update(
                last_applied_seq=None, last_applied_event_id=None, ts=now
            )
    logger.info(
        "events compacted character=%s dropped=%d kept=%d seeds=%d",
        character_id,
        dropped,
        len(protected),
        len(seeds),
    )
    return dropped, len(seeds)


def outbox_compact(*, character_id: int, now: datetime | None = None) -> int:
    """Drop the character's done ops once its outbox holds ``OUTBOX_COMPACT_LINES`` ops or its oldest
    done op is ``OUTBOX_COMPACT_AGE`` old; returns how many were dropped. A done op is only a record:
    its effects are in the views, and a replay of it would change nothing."""
    now = now or timezone.now()
    ops = OutboxOp.objects.filter(character_id=character_id)
    done = ops.filter(status=WorkStatus.DONE)
    oldest = done.aggregate(oldest=Min("finished_at"))["oldest"]
    if oldest is None:
        return 0
    if ops.count() < OUTBOX_COMPACT_LINES and oldest > now - OUTBOX_COMPACT_AGE:
        return 0
    dropped, _ = done.delete()
    logger.info("outbox compacted character=%s dropped=%d", character_id, dropped)
    return dropped


# A done job is a record for the jobs page: kept a month, and the newest of each (character, kind) for
# good, so "when did this loop last finish" stays answerable. Dead work stays until it is retried.
JOB_DONE_RETENTION = timedelta(days=30)
# django-q2's result rows: ``save_limit`` caps the successful ones by count; these cap them by age, and
# the failed ones (which no limit caps) too.
TASK_SUCCESS_RETENTION = timedelta(days=7)
TASK_FAILURE_RETENTION = timedelta(days=30)
RETENTION_BATCH = 5_000  # rows a delete statement: no long lock on a large table


@dataclass(frozen=True)
class RetentionReport:
    jobs: int = 0
    task_successes: int = 0
    task_failures: int = 0


def _delete_in_batches(queryset: QuerySet[Any]) -> int:
    deleted = 0
    while True:
        pks = list(queryset.values_list("pk", flat=True)[:RETENTION_BATCH])
        if not pks:
            return deleted
        count, _ = queryset.model._default_manager.filter(pk__in=pks).delete()
        deleted += count


def work_retention(*, now: datetime | None = None) -> RetentionReport:
    """Drop done jobs past ``JOB_DONE_RETENTION`` (each (character, kind)'s newest stays) and
    django-q2 task results past their retention; the daily retention schedule's tick."""
    now = now or timezone.now()
    newest = (
        Job.objects.filter(character_id=OuterRef("character_id"), kind=OuterRef("kind"))
        .order_by("-created_at", "-pk")
        .values("pk")[:1]
    )
    old_jobs = Job.objects.filter(status=WorkStatus.DONE, finished_at__lt=now - JOB_DONE_RETENTION).exclude(
        pk=Subquery(newest)
    )
    report = RetentionReport(
        jobs=_delete_in_batches(old_jobs),
        task_successes=_delete_in_batches(
            Task.objects.filter(success=True, stopped__lt=now - TASK_SUCCESS_RETENTION)
        ),
        task_failures=_delete_in_batches(
            Task.objects.filter(success=False, stopped__lt=now - TASK_FAILURE_RETENTION)
        ),
    )
    if report.jobs or report.task_successes or report.task_failures:
        logger.info(
            "retention jobs=%d task_successes=%d task_failures=%d",
            report.jobs,
            report.task_successes,
            report.task_failures,
        )
    return report
