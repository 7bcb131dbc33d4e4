"""The move of RecentJob rows onto the kernel's job table keeps in-flight work (migration 0005)."""

from __future__ import annotations

from datetime import timedelta
from uuid import uuid4

import pytest
from django.utils import timezone

from nekomem.journal.models import Job
from tests.support.migrations import migrate, schema_at

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("recent", "0004_fk_index_covered"), ("journal", "0002_fk_index_covered")]
AFTER = [("recent", "0005_recent_jobs_to_kernel_jobs"), ("journal", "0003_work_mechanism")]


@pytest.fixture
def old_schema():
    with schema_at(BEFORE) as apps:
        yield apps


def test_in_flight_recent_jobs_become_kernel_jobs_with_their_attempts_and_reasons(old_schema):
    Character = old_schema.get_model("characters", "Character")
    RecentJob = old_schema.get_model("recent", "RecentJob")
    mel = Character.objects.create(name="Mel")
    kai = Character.objects.create(name="Kai")
    lease = timezone.now() + timedelta(minutes=20)
    token = uuid4()
    retrying = RecentJob.objects.create(
        character=mel, kind="compress", status="pending", attempts=2, last_error="LLMError: HTTP 500"
    )
    waiting = RecentJob.objects.create(
        character=mel, kind="review", status="waiting", last_error="no provider for tier correction"
    )
    RecentJob.objects.create(
        character=kai, kind="compress", status="running", attempts=1, run_token=token, lease_until=lease
    )
    fresh = RecentJob.objects.create(character=kai, kind="review", status="pending")
    RecentJob.objects.create(
        character=mel, kind="review", status="failed", attempts=1, outcome="truncated 1/3"
    )
    cancelled = RecentJob.objects.create(character=kai, kind="review", status="cancelled")
    created_at = {job.pk: job.created_at for job in RecentJob.objects.all()}

    # Through the historical model: the current one has columns that later migrations add.
    names = dict(Character.objects.values_list("pk", "name"))
    migrate(AFTER)

    jobs = {(names[job.character_id], job.kind, job.status, job.outcome): job for job in Job.objects.all()}
    assert len(jobs) == 6
    moved = jobs[("Mel", "recent.compress", "waiting", "")]
    assert (moved.attempts, moved.waiting_reason, moved.last_error) == (2, "backoff", "LLMError: HTTP 500")
    assert moved.next_attempt_at is not None and moved.created_at == created_at[retrying.pk]
    parked = jobs[("Mel", "recent.review", "waiting", "")]
    assert (parked.attempts, parked.waiting_reason, parked.next_attempt_at) == (
        0,
        "no_provider:correction",
        None,
    )
    assert parked.created_at == created_at[waiting.pk]
    held = jobs[("Kai", "recent.compress", "running", "")]
    assert (held.attempts, held.run_token, held.lease_until) == (1, token, lease)
    new = jobs[("Kai", "recent.review", "pending", "")]
    assert (new.attempts, new.waiting_reason) == (0, "")
    assert new.created_at == created_at[fresh.pk]
    assert jobs[("Mel", "recent.review", "dead", "truncated 1/3")].attempts == 1
    assert jobs[("Kai", "recent.review", "done", "cancelled")].created_at == created_at[cancelled.pk]
