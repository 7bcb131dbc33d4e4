"""The kernel's own registrations: the one sweep over durable work."""

from __future__ import annotations

from nekomem.runtime.schedules import ScheduleSpec, register_schedule


def register() -> None:
    register_schedule(
        ScheduleSpec(
            name="jobs-sweep",
            func="nekomem.journal.tasks.jobs_sweep",
            minutes=1,
            description="enqueue due jobs and outbox ops (lost task, expired lease, back-off over, "
            "provider configured), dead-letter spent ones, probe dead self-healing jobs every 5 h",
        )
    )
