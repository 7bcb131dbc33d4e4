"""``outbox.ndjson`` for import and export (reference §2.14): an op's lines (created, attempts, done or
dead) folded into its row and unfolded again. Only an op's attempt count and its last change are
stored, not the time of each failed attempt: its ``attempt`` lines come back stamped with the op's
last change.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from nekomem.characters.models import Character
from nekomem.journal.file_ids import own_id, owned_ids, parse_timestamp, parse_uuid
from nekomem.journal.models import OutboxOp, WorkStatus
from nekomem.journal.work import JOB_MAX_ATTEMPTS
from nekomem.portability import (
    ImportResult,
    MalformedFile,
    chunked,
    read_ndjson,
    write_ndjson,
)
from nekomem.timestamps import iso_local

PENDING, DONE, ATTEMPT = "pending", "done", "attempt"


@dataclass
class OpLines:
    """One op as its lines tell it: registered (pending), failed attempts, finished (done)."""

    op_id: uuid.UUID
    type: str
    payload: dict[str, Any]
    created_at: datetime
    attempts: int = 0
    last_attempt_at: datetime | None = None
    done_at: datetime | None = None

    @property
    def status(self) -> str:
        if self.done_at is None:
            return WorkStatus.PENDING
        # The original dead-letters by writing the done line after the fifth failed attempt.
        return WorkStatus.DEAD if self.attempts >= JOB_MAX_ATTEMPTS else WorkStatus.DONE


def read_outbox(path: Path) -> list[OpLines]:
    ops: dict[uuid.UUID, OpLines] = {}
    later: list[tuple[int, uuid.UUID, str, datetime]] = []
    for number, record in read_ndjson(path):
        try:
            if not isinstance(record, dict):
                raise ValueError(f"expected an object, got {type(record).__name__}")
            op_id = parse_uuid(record.get("op_id"), "op_id")
            status = record.get("status")
            ts = parse_timestamp(record.get("ts"), "ts")
            if status == PENDING:
                op_type, payload = record.get("type"), record.get("payload", {})
                if not isinstance(op_type, str) or not op_type:
                    raise ValueError("missing or non-string 'type'")
                if not isinstance(payload, dict):
                    raise ValueError("'payload' must be an object")
                ops.setdefault(op_id, OpLines(op_id, op_type, payload, ts))
            elif status in (DONE, ATTEMPT):
                later.append((number, op_id, status, ts))
            else:
                raise ValueError(f"unknown status {status!r}")
        except ValueError as exc:
            raise MalformedFile(path, str(exc), entry=f"line {number}") from exc
    for _number, op_id, status, ts in later:
        op = ops.get(op_id)
        if op is None:
            continue  # its pending line was compacted away: nothing left to replay or show
        if status == ATTEMPT:
            op.attempts += 1
            op.last_attempt_at = max(ts, op.last_attempt_at or ts)
        elif op.done_at is None:
            op.done_at = ts
    return list(ops.values())


# What an import writes of an op (the rest, such as a lease or a waiting reason, is cleared).
_OP_FIELDS = (
    "type",
    "payload",
    "status",
    "attempts",
    "created_at",
    "updated_at",
    "finished_at",
    "waiting_reason",
    "next_attempt_at",
    "lease_until",
)


def _last_change(lines: OpLines) -> datetime:
    return lines.done_at or lines.last_attempt_at or lines.created_at


def _op_row(character: Character, op_id: uuid.UUID, lines: OpLines) -> OutboxOp:
    op = OutboxOp(
        op_id=op_id,
        character=character,
        type=lines.type,
        payload=lines.payload,
        status=lines.status,
        attempts=lines.attempts,
        finished_at=lines.done_at,
    )
    op.created_at = lines.created_at
    op.updated_at = _last_change(lines)
    return op


def write_outbox(character: Character, ops: list[OpLines]) -> ImportResult:
    """New ops are added as the file tells them (pending ones are replayed by the jobs sweep, as the
    original replays them at start-up); a known op only moves forward (more attempts, or finished)."""
    owners = owned_ids(OutboxOp, "op_id", (op.op_id for op in ops))
    ids = [own_id(op.op_id, owners, character_id=character.pk) for op in ops]
    current: dict[uuid.UUID, OutboxOp] = {}
    for chunk in chunked(ids):
        current.update((op.op_id, op) for op in OutboxOp.objects.filter(character=character, op_id__in=chunk))
    new: list[OutboxOp] = []
    changed: list[OutboxOp] = []
    for op_id, lines in zip(ids, ops, strict=True):
        row = _op_row(character, op_id, lines)
        known = current.get(op_id)
        if known is None:
            new.append(row)
            continue
        finished = known.status in (WorkStatus.DONE, WorkStatus.DEAD)
        ahead = (row.finished_at is not None and not finished) or (
            not finished and row.attempts > known.attempts
        )
        if ahead:
            changed.append(row)
    # The stamps are the file's, not the import's: bulk_create stamps the auto_now fields, and
    # bulk_update writes the values as they are.
    stamps = {row.op_id: (row.created_at, row.updated_at) for row in new}
    OutboxOp.objects.bulk_create(new, batch_size=1000)
    for row in new:
        row.created_at, row.updated_at = stamps[row.op_id]
    OutboxOp.objects.bulk_update([*new, *changed], _OP_FIELDS, batch_size=1000)
    return ImportResult(created=len(new), updated=len(changed), unchanged=len(ops) - len(new) - len(changed))


def export_outbox(character: Character, path: Path) -> int | None:
    ops = list(OutboxOp.objects.filter(character=character).order_by("created_at", "op_id"))
    if not ops and not path.exists():
        return None
    # (when, order within one moment, line): the lines in the order the original appends them.
    lines: list[tuple[datetime, int, dict[str, Any]]] = []
    for op in ops:
        op_id = str(op.op_id)
        lines.append(
            (
                op.created_at,
                0,
                {
                    "op_id": op_id,
                    "type": op.type,
                    "payload": op.payload,
                    "status": PENDING,
                    "ts": iso_local(op.created_at),
                },
            )
        )
        attempted_at = op.updated_at if op.finished_at is None else min(op.updated_at, op.finished_at)
        for _ in range(op.attempts):
            lines.append(
                (attempted_at, 1, {"op_id": op_id, "status": ATTEMPT, "ts": iso_local(attempted_at)})
            )
        if op.status in (WorkStatus.DONE, WorkStatus.DEAD) and op.finished_at is not None:
            lines.append(
                (op.finished_at, 2, {"op_id": op_id, "status": DONE, "ts": iso_local(op.finished_at)})
            )
    lines.sort(key=lambda line: (line[0], line[1]))
    write_ndjson(path, (line for _when, _order, line in lines))
    return len(ops)
