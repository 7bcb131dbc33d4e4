"""Retention (issue 35): done jobs and django-q2's task results do not pile up for years."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from django_q.brokers import get_broker
from django_q.models import Failure, Success, Task
from django_q.monitor import save_task
from django_q.tasks import async_task

from nekomem.journal.compaction import (
    JOB_DONE_RETENTION,
    TASK_FAILURE_RETENTION,
    TASK_SUCCESS_RETENTION,
    outbox_compact,
    work_retention,
)
from nekomem.journal.models import Job, OutboxOp
from nekomem.journal.tasks import retention_tick
from nekomem.runtime.schedules import registered_schedules
from tests.characters.factories import CharacterFactory
from tests.journal.factories import OutboxOpFactory, make_job

pytestmark = pytest.mark.django_db


def done_job(character, kind: str, *, age: timedelta) -> Job:
    finished = timezone.now() - age
    job = make_job(character=character, kind=kind, status=Job.Status.DONE, finished_at=finished)
    Job.objects.filter(pk=job.pk).update(created_at=finished)
    return job


def test_done_jobs_past_a_month_go_but_each_kinds_newest_stays():
    character = CharacterFactory.create()
    month = JOB_DONE_RETENTION + timedelta(days=1)
    oldest = done_job(character, "recent.compress", age=month + timedelta(days=2))
    older = done_job(character, "recent.compress", age=month + timedelta(days=1))
    newest_of_kind = done_job(character, "recent.compress", age=month)  # the kind's last run: kept
    recent = done_job(character, "facts.extraction", age=timedelta(days=3))
    lone_old = done_job(character, "reflections.synthesis", age=month)  # alone of its kind: kept
    dead = make_job(
        character=character, kind="recent.review", status=Job.Status.DEAD, finished_at=timezone.now() - month
    )
    report = work_retention()
    assert report.jobs == 2
    left = set(Job.objects.values_list("pk", flat=True))
    assert left == {newest_of_kind.pk, recent.pk, lone_old.pk, dead.pk}
    assert oldest.pk not in left and older.pk not in left


def test_task_results_past_their_retention_are_deleted():
    async_task("math.floor", 1.5, sync=True)
    # A failed task as a worker reports it to the monitor (the sync cluster re-raises instead).
    stopped = timezone.now()
    save_task(
        {
            "id": uuid.uuid4().hex,
            "name": "failed-floor",
            "func": "math.floor",
            "args": ("not a number",),
            "kwargs": {},
            "started": stopped,
            "stopped": stopped,
            "result": "TypeError: must be real number, not str",
            "success": False,
        },
        get_broker(),
    )
    assert Success.objects.count() == 1 and Failure.objects.count() == 1
    assert work_retention().task_successes == 0  # fresh results stay
    now = timezone.now()
    Task.objects.update(stopped=now - TASK_SUCCESS_RETENTION - timedelta(hours=1))
    report = work_retention()
    assert report.task_successes == 1 and report.task_failures == 0
    assert Failure.objects.count() == 1  # failures are kept longer
    Task.objects.update(stopped=now - TASK_FAILURE_RETENTION - timedelta(hours=1))
    assert work_retention(now=now).task_failures == 1
    assert not Task.objects.exists()


def test_done_outbox_ops_are_dropped_by_the_journal_compaction():
    character = CharacterFactory.create()
    old = timezone.now() - timedelta(days=91)
    done = OutboxOpFactory.create(character=character, status=OutboxOp.Status.DONE, finished_at=old)
    dead = OutboxOpFactory.create(character=character, status=OutboxOp.Status.DEAD, finished_at=old)
    assert outbox_compact(character_id=character.pk) == 1
    assert set(OutboxOp.objects.values_list("pk", flat=True)) == {dead.pk}
    assert not OutboxOp.objects.filter(pk=done.pk).exists()


def test_retention_runs_daily_from_its_schedule():
    spec = {s.name: s for s in registered_schedules()}["retention"]
    assert spec.func == "nekomem.journal.tasks.retention_tick" and spec.minutes == 24 * 60
    character = CharacterFactory.create()
    done_job(character, "recent.compress", age=JOB_DONE_RETENTION * 2)
    done_job(character, "recent.compress", age=JOB_DONE_RETENTION * 3)
    assert retention_tick()["jobs"] == 1
