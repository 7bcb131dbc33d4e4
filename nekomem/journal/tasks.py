"""django-q2 entry points: thin, id-based, safe to run twice."""

from __future__ import annotations

from datetime import timedelta
from uuid import UUID

from nekomem.journal.services import outbox_op_execute, outbox_ops_requeue


def outbox_op_run(op_id: str) -> str:
    return outbox_op_execute(op_id=UUID(op_id))


def outbox_sweep() -> int:
    # Ops younger than a minute are most likely still queued from their on_commit hook.
    return outbox_ops_requeue(older_than=timedelta(minutes=1))
