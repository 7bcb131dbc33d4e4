"""The kernel's own registrations: the one sweep over durable work, and the journal's part of the
runtime's startup and ``continue`` (the runtime calls these hooks and imports nothing of the journal)."""

from __future__ import annotations

import logging
from datetime import timedelta

from nekomem.characters.services import register_memory_change_observer
from nekomem.journal.services import events_reconcile
from nekomem.journal.sweep import work_sweep
from nekomem.journal.versions import versions_record
from nekomem.runtime.schedules import ScheduleSpec, register_schedule
from nekomem.runtime.startup import register_resume_hook, register_startup_hook

logger = logging.getLogger(__name__)


def register() -> None:
    register_memory_change_observer("journal.versions", versions_record)
    register_schedule(
        ScheduleSpec(
            name="jobs-sweep",
            func="nekomem.journal.tasks.jobs_sweep",
            minutes=1,
            description="enqueue due jobs and outbox ops (lost task, expired lease, back-off over, "
            "provider configured), dead-letter spent ones, probe dead self-healing jobs every 5 h",
        )
    )
    register_schedule(
        ScheduleSpec(
            name="journal-compaction",
            func="nekomem.journal.tasks.journal_compact_loop",
            minutes=60,
            description="drop events older than the history's retention (NEKOMEM_HISTORY_RETENTION_DAYS, "
            "90 days; a live row keeps its last 5 versions) in favour of seeds from the views; "
            "drop done outbox ops once a character has 1 000 ops (or the oldest done is 90 days old)",
        )
    )
    register_schedule(
        ScheduleSpec(
            name="retention",
            func="nekomem.journal.tasks.retention_tick",
            minutes=24 * 60,
            description="drop done jobs after 30 days (the newest of each character and kind stays) and "
            "django-q2 task results (successes after 7 days, failures after 30)",
        )
    )


def runtime_hooks_register() -> None:
    """Before a process serves, the event logs are reconciled; once a storage block lifts, the jobs
    and outbox ops that waited for it are enqueued at once."""
    register_startup_hook("journal.reconcile", events_logs_reconcile)
    register_resume_hook(work_resume)


def events_logs_reconcile() -> None:
    report = events_reconcile()
    logger.info("startup: reconciled %d events, paused=%d", report.applied, len(report.paused))


def work_resume() -> None:
    work_sweep(grace=timedelta(0))
