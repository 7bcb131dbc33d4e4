"""Idle maintenance: compress and review characters idle for 10 s, and stop when activity appears."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from nekomem.characters.models import Character
from nekomem.journal.models import Job
from nekomem.runtime.schedules import registered_schedules
from recent.jobs import REVIEW_JOB
from recent.prompts import MEMO_PREFIX
from recent.services import idle_maintenance_run
from tests.recent.scripting import in_own_connection, is_tier, post, summary, unchanged_review, window
from tests.support.dataset import english_messages


def make_idle(name: str, seconds: float) -> None:
    Character.objects.filter(name=name).update(last_activity_at=timezone.now() - timedelta(seconds=seconds))


@pytest.mark.django_db
def test_schedules_are_registered():
    specs = {spec.name: spec for spec in registered_schedules()}
    assert specs["recent-idle-maintenance"].func == "recent.tasks.idle_maintenance"
    assert specs["jobs-sweep"].func == "nekomem.journal.tasks.jobs_sweep"


@pytest.mark.django_db
def test_idle_character_is_compressed_and_reviewed(client, llm_server, django_capture_on_commit_callbacks):
    post(client, "cache", "Mel", english_messages(25))
    make_idle("Mel", 31 * 60)  # long enough for the review's idle bypass too
    llm_server.script(summary("idle memo"), unchanged_review)

    with django_capture_on_commit_callbacks(execute=True):
        assert idle_maintenance_run() == 1

    assert window("Mel")[0] == ("system", MEMO_PREFIX["en"] + "idle memo")
    assert len(window("Mel")) == 10
    assert [b["model"] for b in llm_server.bodies] == ["test-summary-model", "test-correction-model"]
    assert Job.objects.get(kind=REVIEW_JOB).status == "done"


@pytest.mark.django_db
def test_active_character_is_left_alone(client, llm_server):
    post(client, "cache", "Mel", english_messages(25))
    make_idle("Mel", 3)
    assert idle_maintenance_run() == 0
    assert len(window("Mel")) == 25
    assert llm_server.requests == []


@pytest.mark.django_db(transaction=True)
def test_activity_during_maintenance_stops_it_before_the_review(client, llm_server):
    post(client, "cache", "Mel", english_messages(25))
    make_idle("Mel", 15)

    def chat_resumes_then_answer(body):
        assert is_tier(body, "summary")
        in_own_connection(
            lambda: Character.objects.filter(name="Mel").update(last_activity_at=timezone.now())
        )
        return summary("idle memo")

    llm_server.script(chat_resumes_then_answer)
    assert idle_maintenance_run() == 1
    assert window("Mel")[0] == ("system", MEMO_PREFIX["en"] + "idle memo")
    assert not Job.objects.filter(kind=REVIEW_JOB).exists()
    assert len(llm_server.requests) == 1
