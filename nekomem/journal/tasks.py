"""django-q2 entry points: thin, id-based, safe to run twice."""

from __future__ import annotations

from datetime import timedelta
from uuid import UUID

from nekomem.journal.services import outbox_op_execute, outbox_ops_execute, outbox_ops_requeue


def outbox_ops_run(op_ids: list[str]) -> dict[str, str]:
    statuses = outbox_ops_execute(op_ids=[UUID(op_id) for op_id in op_ids])
    return {str(op_id): status for op_id, status in statuses.items()}


def outbox_op_run(op_id: str) -> str:
    # Tasks enqueued one op at a time by earlier versions may still be in the broker.
    return outbox_op_execute(op_id=UUID(op_id))


def outbox_sweep() -> int:
    # Ops younger than a minute are most likely still queued from their on_commit hook.
    return outbox_ops_requeue(older_than=timedelta(minutes=1))
