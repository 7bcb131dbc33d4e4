"""Block means nothing writes: jobs, outbox ops, the sweep and schedule ticks wait for ``continue``.

In-process (django-q2 runs tasks synchronously here); tests/e2e/test_storage_block_cluster.py runs
the same against a real cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone
from django_q.models import Schedule

from nekomem.characters.locks import lock_character
from nekomem.journal.jobs import job_create, job_run, register_job_kind, unregister_job_kind
from nekomem.journal.models import Job, OutboxOp
from nekomem.journal.registry import register_outbox_step, unregister_outbox_step
from nekomem.journal.services import outbox_op_register, outbox_ops_execute
from nekomem.journal.sweep import work_sweep
from nekomem.runtime import startup, state
from nekomem.runtime.models import StorageState
from nekomem.runtime.services import schedules_upsert
from nekomem.runtime.status import status_snapshot
from nekomem.runtime.tasks import SCHEDULED_TICK, scheduled_tick
from tests.characters.factories import CharacterFactory

pytestmark = pytest.mark.django_db

KIND = "test.block"
OP = "test_block_op"
ticks: list[str] = []


class Handler:
    def __init__(self) -> None:
        self.runs = 0
        self.block_midway = False

    def __call__(self, job: Job) -> str:
        self.runs += 1
        if self.block_midway:
            self.block_midway = False
            state.storage_block(reason="restore")  # the block arrives while the job is running
        with transaction.atomic():
            lock_character(job.character_id)  # the job's next write
        return "ran"


@pytest.fixture
def handler() -> Iterator[Handler]:
    handler = Handler()
    register_job_kind(KIND, handler=handler)
    yield handler
    unregister_job_kind(KIND)


def block(internal_client) -> None:
    response = internal_client.post(
        "/internal/storage/startup/block", data="{}", content_type="application/json"
    )
    assert response.status_code == 200


def release(internal_client) -> None:
    response = internal_client.post("/internal/storage/startup/continue", content_type="application/json")
    assert response.status_code == 200 and response.json()["ok"] is True


def row(job: Job) -> tuple[object, ...]:
    return tuple(
        Job.objects.filter(pk=job.pk).values_list("status", "attempts", "waiting_reason", "updated_at").get()
    )


def test_a_job_is_not_claimed_while_blocked_and_runs_on_continue(handler, internal_client):
    job, _ = job_create(character_id=CharacterFactory.create().pk, kind=KIND, enqueue=False)
    block(internal_client)
    before = row(job)
    assert state.storage_writes_allowed() is False

    assert job_run(job_id=job.pk) == state.STORAGE_BLOCKED
    assert work_sweep(now=timezone.now() + timedelta(days=1)).jobs == 0
    assert row(job) == before and handler.runs == 0
    # Nothing was written to say so; the status view reports the wait.
    jobs = status_snapshot().jobs
    assert jobs is not None and jobs.pending == 0 and jobs.waiting == 1
    assert [(r.reason, r.count, r.kinds) for r in jobs.waiting_by_reason] == [
        (state.STORAGE_BLOCKED, 1, [KIND])
    ]

    release(internal_client)  # enqueues the due work: here (sync) it runs at once
    assert handler.runs == 1
    assert Job.objects.get(pk=job.pk).status == "done"


def test_a_job_the_block_catches_in_flight_waits_without_spending_an_attempt(handler, internal_client):
    job, _ = job_create(character_id=CharacterFactory.create().pk, kind=KIND, enqueue=False)
    handler.block_midway = True

    assert job_run(job_id=job.pk) == "waiting"
    status, attempts, reason, _ = row(job)
    assert (status, attempts, reason) == ("waiting", 0, state.STORAGE_BLOCKED)
    assert work_sweep(now=timezone.now() + timedelta(days=1)).jobs == 0  # still blocked
    jobs = status_snapshot().jobs
    assert jobs is not None and [r.reason for r in jobs.waiting_by_reason] == [state.STORAGE_BLOCKED]

    release(internal_client)
    job.refresh_from_db()
    assert (job.status, job.attempts, job.waiting_reason, handler.runs) == ("done", 0, "", 2)


@pytest.fixture
def op_steps() -> Iterator[list[int]]:
    ran: list[int] = []
    register_outbox_step(OP, "record", lambda character_id, payload: ran.append(character_id))
    yield ran
    unregister_outbox_step(OP, "record")


def test_an_outbox_op_is_not_claimed_while_blocked_and_runs_on_continue(op_steps, internal_client):
    character = CharacterFactory.create()
    block(internal_client)
    with transaction.atomic():
        op = outbox_op_register(character_id=character.pk, op_type=OP, payload={})
    # Its task ran (synchronously) on commit and left the op alone.
    fields = ("status", "attempts", "waiting_reason", "updated_at")
    before = OutboxOp.objects.filter(pk=op.pk).values_list(*fields).get()
    assert outbox_ops_execute(op_ids=[op.op_id]) == {op.op_id: state.STORAGE_BLOCKED}
    assert OutboxOp.objects.filter(pk=op.pk).values_list(*fields).get() == before
    assert before[0] == "pending" and op_steps == []

    release(internal_client)
    assert OutboxOp.objects.get(pk=op.pk).status == "done" and op_steps == [character.pk]


def test_a_block_that_stops_a_later_step_keeps_the_earlier_steps_done(internal_client):
    """Step-once across a block: the step before the one the block stopped is not run again."""
    counted: list[int] = []
    writes_runs: list[int] = []

    def count(character_id: int, payload: dict) -> None:
        counted.append(character_id)

    def writes(character_id: int, payload: dict) -> None:
        writes_runs.append(character_id)
        if len(writes_runs) == 1:  # the first run: a block arrives while the op runs
            block(internal_client)
        with transaction.atomic():
            lock_character(character_id)  # the next write stops here while blocked

    register_outbox_step(OP, "count", count)
    register_outbox_step(OP, "writes", writes)
    try:
        character = CharacterFactory.create()
        with transaction.atomic():
            op = outbox_op_register(character_id=character.pk, op_type=OP, payload={})
        assert outbox_ops_execute(op_ids=[op.op_id]) == {op.op_id: "waiting"}
        op.refresh_from_db()
        assert (op.waiting_reason, op.steps_done, op.attempts) == (state.STORAGE_BLOCKED, ["count"], 0)
        release(internal_client)  # continue enqueues the waiting op, which runs its second step only
        assert OutboxOp.objects.get(pk=op.pk).status == "done"
    finally:
        unregister_outbox_step(OP, "count")
        unregister_outbox_step(OP, "writes")
    assert counted == [character.pk] and writes_runs == [character.pk, character.pk]


def tick() -> str:
    ticks.append("ran")
    return "ticked"


def test_a_schedule_tick_is_skipped_while_blocked(internal_client):
    ticks.clear()
    func = f"{__name__}.tick"
    block(internal_client)
    assert scheduled_tick(func) == state.STORAGE_BLOCKED and ticks == []
    release(internal_client)
    assert scheduled_tick(func) == "ticked" and ticks == ["ran"]


def test_every_schedule_runs_through_the_gate_and_is_due_at_continue(internal_client):
    names = schedules_upsert()
    schedules = Schedule.objects.filter(name__in=names)
    assert schedules.count() == len(names) > 0
    assert {s.func for s in schedules} == {SCHEDULED_TICK}
    assert "'nekomem.journal.tasks.jobs_sweep'" in {s.args for s in schedules}
    later = timezone.now() + timedelta(hours=1)
    schedules.update(next_run=later)
    block(internal_client)
    release(internal_client)
    assert all(s.next_run < later for s in Schedule.objects.filter(name__in=names))


def test_continue_hooks_run_before_the_writers_go_and_may_write(handler, internal_client):
    job, _ = job_create(character_id=CharacterFactory.create().pk, kind=KIND, enqueue=False)
    seen: list[tuple[bool, int, bool]] = []

    def reread_folder() -> None:
        with state.storage_writer() as allowed:
            with transaction.atomic():
                lock_character(job.character_id)  # a hook's own writes go through
            seen.append((StorageState.objects.get(pk=1).blocked, handler.runs, allowed))

    def broken() -> None:
        raise RuntimeError("a hook that fails must not keep the server blocked")

    startup.register_continue_hook(broken)
    startup.register_continue_hook(reread_folder)
    startup.register_continue_hook(reread_folder)  # registered once
    try:
        block(internal_client)
        release(internal_client)
    finally:
        startup.unregister_continue_hook(broken)
        startup.unregister_continue_hook(reread_folder)
    assert seen == [(True, 0, True)]  # still blocked, and the job had not run yet
    assert handler.runs == 1 and state.storage_writes_allowed() is True
