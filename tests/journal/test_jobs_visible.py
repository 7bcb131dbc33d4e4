"""Jobs as an operator sees them: the admin list, its retry action, and the read-only REST endpoint."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.urls import reverse

from nekomem.journal.jobs import register_job_kind, unregister_job_kind
from nekomem.journal.models import Job
from tests.characters.factories import CharacterFactory
from tests.journal.factories import make_job

pytestmark = pytest.mark.django_db

KIND = "test.visible"


@pytest.fixture
def runs() -> Iterator[list[int]]:
    runs: list[int] = []

    def handle(job: Job) -> str:
        runs.append(job.pk)
        return "ran after retry"

    register_job_kind(KIND, handler=handle)
    yield runs
    unregister_job_kind(KIND)


def test_a_dead_job_retried_from_the_admin_runs_and_becomes_done(
    admin_client, runs, django_capture_on_commit_callbacks
):
    dead = make_job(kind=KIND, status="dead", attempts=5, last_error="RuntimeError: upstream down")
    other = make_job(kind=KIND, status="dead", attempts=5)
    url = reverse("admin:journal_job_changelist")

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, {"action": "retry", "_selected_action": [dead.pk]}, follow=True)

    assert response.status_code == 200
    assert "1 of 1 dead item(s) retried." in [str(m) for m in response.context["messages"]]
    dead.refresh_from_db()
    assert (dead.status, dead.outcome, dead.attempts, dead.last_error) == ("done", "ran after retry", 0, "")
    assert runs == [dead.pk]
    other.refresh_from_db()
    assert other.status == "dead"  # only the selected job


def test_the_admin_lists_jobs_by_kind_and_status_and_refuses_edits(admin_client):
    make_job(kind="recent.compress", status="dead")
    make_job(kind="recent.compress", status="done")
    make_job(kind="recent.review", status="dead")
    url = reverse("admin:journal_job_changelist")

    assert admin_client.get(url, {"kind": "recent.compress"}).context["cl"].result_count == 2
    assert admin_client.get(url, {"status__exact": "dead"}).context["cl"].result_count == 2
    both = admin_client.get(url, {"kind": "recent.compress", "status__exact": "dead"})
    assert both.context["cl"].result_count == 1
    job = Job.objects.first()
    assert job is not None
    change = reverse("admin:journal_job_change", args=[job.pk])
    admin_client.post(change, {"status": "pending"})
    assert Job.objects.get(pk=job.pk).status == job.status


def test_the_jobs_endpoint_filters_by_character_kind_and_status(client):
    mel, kai = CharacterFactory.create(name="Mel"), CharacterFactory.create(name="Kai")
    waiting = make_job(
        character=mel, kind="recent.compress", status="waiting", waiting_reason="no_provider:summary"
    )
    make_job(character=mel, kind="recent.review", status="done")
    make_job(character=kai, kind="recent.compress", status="dead")

    everything = client.get("/api/v1/jobs/").json()
    assert everything["count"] == 3
    listed = client.get("/api/v1/jobs/", {"character": "Mel", "kind": "recent.compress"}).json()["results"]
    assert [(j["id"], j["character"], j["status"], j["waiting_reason"]) for j in listed] == [
        (waiting.pk, "Mel", "waiting", "no_provider:summary")
    ]
    assert [j["character"] for j in client.get("/api/v1/jobs/", {"status": "dead"}).json()["results"]] == [
        "Kai"
    ]
    assert client.get("/api/v1/jobs/", {"status": "sleeping"}).status_code == 400
    assert client.get(f"/api/v1/jobs/{waiting.pk}/").json()["kind"] == "recent.compress"
    assert client.post("/api/v1/jobs/", {"kind": "x"}, content_type="application/json").status_code == 405
