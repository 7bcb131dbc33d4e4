from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone
from django_q.models import Task

from nekomem.journal import services
from nekomem.journal.broker import OUTBOX_BATCH_MAX
from nekomem.journal.jobs import JobWait
from nekomem.journal.models import OutboxOp
from nekomem.journal.registry import register_outbox_step, unregister_outbox_step
from nekomem.journal.sweep import work_sweep
from nekomem.journal.work import work_claim, work_release_leases
from tests.characters.factories import CharacterFactory
from tests.journal.factories import OutboxOpFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def step_calls():
    """A post-turn step that records its calls and fails while ``fail`` holds a count above zero."""
    calls: list[dict] = []
    control = {"fail": 0}

    def step(character_id: int, payload: dict) -> None:
        calls.append(payload)
        if control["fail"] > 0:
            control["fail"] -= 1
            raise RuntimeError("provider down")

    register_outbox_step("test_op", "record", step)
    yield calls, control
    unregister_outbox_step("test_op", "record")


def register(character_id: int, payload: dict | None = None) -> OutboxOp:
    with transaction.atomic():
        return services.outbox_op_register(
            character_id=character_id, op_type="test_op", payload=payload or {"n": 1}
        )


@pytest.mark.django_db(transaction=True)
def test_register_outside_a_transaction_is_refused():
    character = CharacterFactory.create()
    with pytest.raises(RuntimeError):
        services.outbox_op_register(character_id=character.pk, op_type="test_op", payload={})


def test_an_op_rolled_back_with_its_turn_never_exists(step_calls):
    character = CharacterFactory.create()
    with pytest.raises(ZeroDivisionError), transaction.atomic():
        services.outbox_op_register(character_id=character.pk, op_type="test_op", payload={})
        1 / 0  # noqa: B018
    assert OutboxOp.objects.count() == 0
    assert step_calls[0] == []


def test_commit_enqueues_and_the_task_runs_the_op_to_done(step_calls, django_capture_on_commit_callbacks):
    character = CharacterFactory.create()
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        op = register(character.pk, {"n": 7})
    assert len(callbacks) == 1
    op.refresh_from_db()
    assert op.status == OutboxOp.Status.DONE and op.finished_at is not None
    assert step_calls[0] == [{"n": 7}]
    # The op row is the record of a successful run; django-q keeps no result row for it.
    assert not Task.objects.exists()


def test_running_a_done_op_again_does_nothing(step_calls):
    op = register(CharacterFactory.create().pk)
    assert services.outbox_op_execute(op_id=op.op_id) == "done"
    assert services.outbox_op_execute(op_id=op.op_id) == "done"
    assert len(step_calls[0]) == 1


def test_failures_count_attempts_then_success_completes(step_calls):
    calls, control = step_calls
    control["fail"] = 2
    op = register(CharacterFactory.create().pk)
    assert services.outbox_op_execute(op_id=op.op_id) == "waiting"
    assert services.outbox_op_execute(op_id=op.op_id) == "waiting"
    op.refresh_from_db()
    assert op.attempts == 2 and op.waiting_reason == "backoff" and "provider down" in op.last_error
    assert services.outbox_op_execute(op_id=op.op_id) == "done"
    assert len(calls) == 3


def test_five_failures_dead_letter_the_op_which_stays_visible(step_calls):
    _calls, control = step_calls
    control["fail"] = 99
    op = register(CharacterFactory.create().pk)
    statuses = [services.outbox_op_execute(op_id=op.op_id) for _ in range(6)]
    assert statuses == ["waiting"] * 4 + ["dead", "dead"]
    op.refresh_from_db()
    assert op.status == OutboxOp.Status.DEAD and op.attempts == 5
    assert work_sweep(grace=timedelta(0), now=timezone.now() + timedelta(days=1)).ops == 0


def test_a_leased_op_is_not_run_twice_until_the_lease_is_released(step_calls):
    op = register(CharacterFactory.create().pk)
    assert work_claim(OutboxOp.objects.filter(pk=op.pk), lease=timedelta(minutes=10)) is not None
    assert services.outbox_op_execute(op_id=op.op_id) == "busy"
    assert work_sweep(grace=timedelta(0)).ops == 0
    assert work_release_leases(OutboxOp) == 1
    assert services.outbox_op_execute(op_id=op.op_id) == "done"


def test_requeue_runs_every_pending_op(step_calls):
    character = CharacterFactory.create()
    ops = [register(character.pk, {"n": i}) for i in range(3)]
    assert work_sweep(grace=timedelta(0)).ops == 3  # sync cluster in tests: each runs as it is enqueued
    assert set(OutboxOp.objects.filter(pk__in=[o.pk for o in ops]).values_list("status", flat=True)) == {
        "done"
    }


def test_a_waiting_step_parks_the_op_without_counting_an_attempt():
    def needs_provider(character_id: int, payload: dict) -> None:
        raise JobWait("no_provider:summary")

    register_outbox_step("test_op", "wait", needs_provider)
    try:
        op = register(CharacterFactory.create().pk)
        assert services.outbox_op_execute(op_id=op.op_id) == "waiting"
        op.refresh_from_db()
        assert op.status == OutboxOp.Status.WAITING and op.attempts == 0
        assert op.waiting_reason == "no_provider:summary" and op.next_attempt_at is None
        assert op.lease_until is None
    finally:
        unregister_outbox_step("test_op", "wait")
    assert services.outbox_op_execute(op_id=op.op_id) == "done"


def test_a_batch_runs_each_op_on_its_own(step_calls, django_capture_on_commit_callbacks):
    calls, control = step_calls
    character = CharacterFactory.create()
    with django_capture_on_commit_callbacks(execute=False):
        ops = [register(character.pk, {"n": i}) for i in range(4)]
    OutboxOp.objects.filter(pk=ops[3].pk).update(status=OutboxOp.Status.DONE)
    missing = uuid.uuid4()
    control["fail"] = 1  # the first op run fails once
    statuses = services.outbox_ops_execute(
        op_ids=[ops[0].op_id, ops[1].op_id, missing, ops[2].op_id, ops[3].op_id]
    )
    assert statuses == {
        ops[0].op_id: "waiting",
        ops[1].op_id: "done",
        missing: "missing",
        ops[2].op_id: "done",
        ops[3].op_id: "done",
    }
    assert [payload["n"] for payload in calls] == [0, 1, 2]  # in the given order; the done op not rerun
    first = OutboxOp.objects.get(pk=ops[0].pk)
    assert (first.status, first.attempts, first.lease_until) == (OutboxOp.Status.WAITING, 1, None)
    assert "provider down" in first.last_error
    assert services.outbox_op_execute(op_id=ops[0].op_id) == "done"


def test_the_sweep_enqueues_pending_ops_as_batches(step_calls, settings):
    calls, _control = step_calls
    character = CharacterFactory.create()
    with transaction.atomic():
        for i in range(OUTBOX_BATCH_MAX + 5):
            OutboxOpFactory.create(character=character, payload={"n": i})
    assert work_sweep(grace=timedelta(0)).ops == OUTBOX_BATCH_MAX + 5
    assert sorted(p["n"] for p in calls) == list(range(OUTBOX_BATCH_MAX + 5))
    assert not OutboxOp.objects.exclude(status=OutboxOp.Status.DONE).exists()


def test_a_finished_op_is_marked_done_before_a_slow_later_op_of_its_batch_runs(monkeypatch):
    character = CharacterFactory.create()
    seen: list[str] = []

    def step(character_id: int, payload: dict) -> None:
        if payload["n"] == 1:  # the "slow" op looks at the one before it
            seen.append(OutboxOp.objects.get(payload__n=0).status)

    monkeypatch.setattr(services, "OUTBOX_DONE_MARK_SECONDS", 0.0)
    register_outbox_step("test_op", "look", step)
    try:
        with transaction.atomic():
            ops = [OutboxOpFactory.create(character=character, payload={"n": i}) for i in range(2)]
        assert services.outbox_ops_execute(op_ids=[op.op_id for op in ops]) == {
            op.op_id: "done" for op in ops
        }
    finally:
        unregister_outbox_step("test_op", "look")
    assert seen == [OutboxOp.Status.DONE]


def test_a_step_that_succeeded_is_not_run_again_when_a_later_one_fails_or_waits():
    """Step-once: a count applied before a later step waits or fails is applied once across retries."""
    counted: list[int] = []
    later = {"runs": 0}

    def count(character_id: int, payload: dict) -> None:
        counted.append(character_id)

    def flaky(character_id: int, payload: dict) -> None:
        later["runs"] += 1
        if later["runs"] == 1:
            raise JobWait("no_provider:summary")
        if later["runs"] == 2:
            raise RuntimeError("provider down")

    register_outbox_step("test_op", "count", count)
    register_outbox_step("test_op", "flaky", flaky)
    try:
        op = register(CharacterFactory.create().pk)
        assert services.outbox_op_execute(op_id=op.op_id) == "waiting"
        op.refresh_from_db()
        assert op.steps_done == ["count"] and op.attempts == 0
        assert services.outbox_op_execute(op_id=op.op_id) == "waiting"
        op.refresh_from_db()
        assert op.steps_done == ["count"] and op.attempts == 1
        assert services.outbox_op_execute(op_id=op.op_id) == "done"
    finally:
        unregister_outbox_step("test_op", "count")
        unregister_outbox_step("test_op", "flaky")
    assert len(counted) == 1 and later["runs"] == 3
    op.refresh_from_db()
    # The op that finished keeps no list of its own run: only a run that stopped short writes one.
    assert op.steps_done == ["count"] and op.status == OutboxOp.Status.DONE


def test_a_failed_step_is_not_recorded_and_runs_again(step_calls):
    calls, control = step_calls
    control["fail"] = 1
    op = register(CharacterFactory.create().pk)
    assert services.outbox_op_execute(op_id=op.op_id) == "waiting"
    op.refresh_from_db()
    assert op.steps_done == []
    assert services.outbox_op_execute(op_id=op.op_id) == "done"
    assert len(calls) == 2
