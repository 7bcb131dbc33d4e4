"""django-q2 entry points: thin, id-based, safe to run twice."""

from __future__ import annotations

from uuid import UUID

from nekomem.journal.compaction import journal_compact, work_retention
from nekomem.journal.jobs import job_run as job_run_service
from nekomem.journal.services import outbox_op_execute, outbox_ops_execute
from nekomem.journal.sweep import work_sweep
from nekomem.runtime.schedules import each_character


def outbox_ops_run(op_ids: list[str]) -> dict[str, str]:
    statuses = outbox_ops_execute(op_ids=[UUID(op_id) for op_id in op_ids])
    return {str(op_id): status for op_id, status in statuses.items()}


def outbox_op_run(op_id: str) -> str:
    # Tasks enqueued one op at a time by earlier versions may still be in the broker.
    return outbox_op_execute(op_id=UUID(op_id))


def job_run(job_id: int) -> str:
    return job_run_service(job_id=int(job_id))


def jobs_sweep() -> dict[str, int]:
    report = work_sweep()
    return {"jobs": report.jobs, "ops": report.ops, "probed": report.probed}


def journal_compact_loop() -> None:
    each_character("journal compaction", lambda cid: journal_compact(character_id=cid))


def retention_tick() -> dict[str, int]:
    report = work_retention()
    return {
        "jobs": report.jobs,
        "task_successes": report.task_successes,
        "task_failures": report.task_failures,
    }
