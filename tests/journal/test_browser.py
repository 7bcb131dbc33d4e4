"""The memory browser's jobs page: a character's jobs by state and kind, why they wait, and retry."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.test import Client
from django.urls import reverse

from nekomem.journal.browser import JOBS_PER_PAGE
from nekomem.journal.jobs import register_job_kind, unregister_job_kind
from nekomem.journal.models import Job
from tests.characters.factories import CharacterFactory
from tests.journal.factories import JobFactory

pytestmark = pytest.mark.django_db

KIND = "test.browser"
NAME = "小天"
URL = "/browse/小天/jobs/"


@pytest.fixture
def runs() -> Iterator[list[int]]:
    ran: list[int] = []

    def handle(job: Job) -> str:
        ran.append(job.pk)
        return "ran after retry"

    register_job_kind(KIND, handler=handle)
    yield ran
    unregister_job_kind(KIND)


def shown_ids(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'data-testid="job-(\d+)"', html)]


def test_the_page_shows_waiting_with_reason_running_and_dead_with_its_error(client: Client) -> None:
    character = CharacterFactory.create(name=NAME)
    waiting = JobFactory.create(
        character=character, kind="recent.compress", status="waiting", waiting_reason="no_provider:summary"
    )
    dead = JobFactory.create(
        character=character,
        kind="recent.review",
        status="dead",
        attempts=5,
        last_error="RuntimeError: HTTP 500",
    )
    running = JobFactory.create(character=character, kind="facts.extract", status="running")
    other = JobFactory.create(kind="recent.compress", status="dead")  # another character's

    page = client.get(URL)
    assert page.status_code == 200
    html = page.content.decode()
    assert sorted(shown_ids(html)) == sorted([waiting.pk, dead.pk, running.pk])
    assert other.pk not in shown_ids(html)
    assert "没有 summary 层的 LLM 提供方 No provider for the summary tier" in html
    assert "RuntimeError: HTTP 500" in html
    # Retry is offered on the dead and the waiting job, not on the running one.
    retry_urls = re.findall(r'action="/browse/[^"]+/jobs/(\d+)/retry/"', html)
    assert sorted(map(int, retry_urls)) == sorted([waiting.pk, dead.pk])
    assert page.context["active_tab"] == "jobs"


def test_jobs_filter_by_state_and_kind(client: Client) -> None:
    character = CharacterFactory.create(name=NAME)
    dead_compress = JobFactory.create(character=character, kind="recent.compress", status="dead")
    JobFactory.create(character=character, kind="recent.review", status="dead")
    JobFactory.create(character=character, kind="recent.compress", status="done")

    assert len(shown_ids(client.get(URL, {"status": "dead"}).content.decode())) == 2
    both = client.get(URL, {"status": "dead", "kind": "recent.compress"}).content.decode()
    assert shown_ids(both) == [dead_compress.pk]
    # A state that does not exist is ignored, not an error page.
    assert len(shown_ids(client.get(URL, {"status": "exploded"}).content.decode())) == 3


def test_jobs_are_paginated_newest_first(client: Client) -> None:
    character = CharacterFactory.create(name=NAME)
    jobs = [
        JobFactory.create(character=character, kind=f"k.{i}", status="done") for i in range(JOBS_PER_PAGE + 3)
    ]
    first = client.get(URL)
    assert first.context["page"].paginator.num_pages == 2
    assert len(shown_ids(first.content.decode())) == JOBS_PER_PAGE
    second = shown_ids(client.get(URL, {"page": 2}).content.decode())
    assert second == [job.pk for job in reversed(jobs[:3])]


def test_retrying_a_dead_job_runs_it_through_the_admins_service(
    client: Client, runs: list[int], django_capture_on_commit_callbacks
) -> None:
    character = CharacterFactory.create(name=NAME)
    dead = JobFactory.create(character=character, kind=KIND, status="dead", attempts=5, last_error="x")

    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(
            f"/browse/{NAME}/jobs/{dead.pk}/retry/",
            {"filters": "status=dead&evil=1", "page": "1"},
            follow=True,
        )

    assert (
        answer.redirect_chain[0][0] == reverse("browser-jobs", kwargs={"name": NAME}) + "?status=dead&page=1"
    )
    assert f"已重试任务 Retried job #{dead.pk} ({KIND})" in [str(m) for m in answer.context["messages"]]
    dead.refresh_from_db()
    assert (dead.status, dead.outcome, dead.attempts) == ("done", "ran after retry", 0)
    assert runs == [dead.pk]


def test_retrying_a_waiting_job_runs_it_now_with_the_attempts_it_spent(
    client: Client, runs: list[int], django_capture_on_commit_callbacks
) -> None:
    character = CharacterFactory.create(name=NAME)
    waiting = JobFactory.create(
        character=character, kind=KIND, status="waiting", attempts=2, waiting_reason="backoff"
    )
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/browse/{NAME}/jobs/{waiting.pk}/retry/")
    waiting.refresh_from_db()
    assert (waiting.status, waiting.attempts) == ("done", 2)
    assert runs == [waiting.pk]


def test_a_job_that_cannot_be_retried_changes_nothing_and_says_why(client: Client, runs: list[int]) -> None:
    character = CharacterFactory.create(name=NAME)
    done = JobFactory.create(character=character, kind=KIND, status="done", outcome="kept")
    answer = client.post(f"/browse/{NAME}/jobs/{done.pk}/retry/", follow=True)
    messages = [(m.tags, str(m)) for m in answer.context["messages"]]
    assert messages == [
        (
            "error",
            f"任务 #{done.pk} 不能重试：它已不再失败或等待 "
            f"Job #{done.pk} cannot be retried: it is no longer dead or waiting",
        )
    ]
    done.refresh_from_db()
    assert (done.status, done.outcome) == ("done", "kept") and runs == []


def test_another_characters_job_cannot_be_retried_from_this_page(client: Client, runs: list[int]) -> None:
    CharacterFactory.create(name=NAME)
    foreign = JobFactory.create(kind=KIND, status="dead")
    assert client.post(f"/browse/{NAME}/jobs/{foreign.pk}/retry/").status_code == 404
    foreign.refresh_from_db()
    assert foreign.status == "dead" and runs == []


def test_retry_needs_the_csrf_token_and_off_loopback_a_login(runs: list[int]) -> None:
    character = CharacterFactory.create(name=NAME)
    dead = JobFactory.create(character=character, kind=KIND, status="dead")
    strict = Client(enforce_csrf_checks=True)
    assert strict.post(f"/browse/{NAME}/jobs/{dead.pk}/retry/").status_code == 403
    assert Client().get(URL, REMOTE_ADDR="192.0.2.7", HTTP_HOST="127.0.0.1").status_code == 302
    dead.refresh_from_db()
    assert dead.status == "dead" and runs == []


def test_the_jobs_tab_counts_jobs_that_are_not_done(client: Client) -> None:
    character = CharacterFactory.create(name=NAME)
    for status in ("waiting", "dead", "running", "pending", "done", "done"):
        JobFactory.create(character=character, kind=f"k.{status}.{Job.objects.count()}", status=status)
    counts = dict(client.get(f"/browse/{NAME}/").context["counts"])
    assert counts["任务 Jobs"] == 4
    assert client.get(URL).status_code == 200
    assert client.get("/browse/nobody/jobs/").status_code == 404
