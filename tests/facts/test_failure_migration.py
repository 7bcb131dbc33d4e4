"""Migration 0003 turns in-flight failure counts of extraction and arbitration into kernel jobs."""

from __future__ import annotations

import pytest
from django.utils import timezone

from nekomem.journal.models import Job
from tests.support.migrations import migrate, schema_at

pytestmark = pytest.mark.django_db(transaction=True)

# The character table as it is today: the historical Character of these targets must match it.
BEFORE = [
    ("facts", "0002_dedup_tokens_and_pair_record"),
    ("journal", "0003_work_mechanism"),
    ("characters", "0004_recent_state_moved"),
]
AFTER = [("facts", "0003_failures_to_kernel_jobs")]


@pytest.fixture
def old_schema():
    with schema_at(BEFORE) as apps:
        yield apps


def test_failing_windows_and_pairs_become_waiting_jobs_with_their_attempts(old_schema):
    Character = old_schema.get_model("characters", "Character")
    ExtractionCursor = old_schema.get_model("facts", "ExtractionCursor")
    FactDedupPair = old_schema.get_model("facts", "FactDedupPair")
    mel, kai, ann = (Character.objects.create(name=name) for name in ("Mel", "Kai", "Ann"))
    ExtractionCursor.objects.create(
        character=mel, window_failures=3, b_window_failures=1, last_error="FactExtractionFailed: HTTP 500"
    )
    ExtractionCursor.objects.create(character=kai, waiting_reason="no provider for tier summary")
    ExtractionCursor.objects.create(character=ann)  # healthy: no job
    for attempts in (2, 4):
        FactDedupPair.objects.create(
            character=kai,
            candidate_text="a",
            existing_text="b",
            entity="master",
            queued_at=timezone.now(),
            attempts=attempts,
        )

    # Through the historical model: the current one has columns that later migrations add.
    names = dict(Character.objects.values_list("pk", "name"))
    migrate(AFTER)

    jobs = {(names[job.character_id], job.kind, job.key): job for job in Job.objects.all()}
    assert set(jobs) == {
        ("Mel", "facts.extraction", "a"),
        ("Mel", "facts.extraction", "b"),
        ("Kai", "facts.extraction", "a"),
        ("Kai", "facts.dedup", ""),
    }
    window = jobs[("Mel", "facts.extraction", "a")]
    assert (window.status, window.waiting_reason, window.attempts) == ("waiting", "backoff", 3)
    assert window.last_error == "FactExtractionFailed: HTTP 500"
    assert jobs[("Mel", "facts.extraction", "b")].attempts == 1
    parked = jobs[("Kai", "facts.extraction", "a")]
    assert (parked.waiting_reason, parked.attempts) == ("no_provider:summary", 0)
    assert jobs[("Kai", "facts.dedup", "")].attempts == 4
