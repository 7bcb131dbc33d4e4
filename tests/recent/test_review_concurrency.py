"""The review against real concurrent writes and cancels made while the LLM "thinks"."""

from __future__ import annotations

import pytest
from django.test import Client

from nekomem.characters.models import Character
from nekomem.journal.models import Job
from recent.jobs import REVIEW_JOB, recent_job_request
from recent.models import RecentWindowState
from tests.recent.scripting import in_own_connection, post, run_job, window
from tests.support.dataset import english_messages
from tests.support.llm_server import json_content

pytestmark = pytest.mark.django_db(transaction=True)


def review_job(character: Character) -> Job:
    # Not enqueued: in these committing tests django-q would run it before the LLM is scripted.
    job, _ = recent_job_request(character_id=character.pk, kind=REVIEW_JOB, enqueue=False)
    return job


def fix_last(rows: list[tuple[str, str]], text: str) -> dict:
    dialogue = [{"role": t, "content": c} for t, c in rows[:-1]] + [{"role": rows[-1][0], "content": text}]
    return {"explanation": "tidied", "corrected_dialogue": dialogue}


def test_turns_appended_during_the_review_survive_its_splice(client, llm_server):
    post(client, "cache", "Mel", english_messages(10))
    job = review_job(Character.objects.get(name="Mel"))
    before = window("Mel")
    late = english_messages(2, start=40)

    def append_then_answer(body):
        in_own_connection(lambda: post(Client(), "cache", "Mel", late))
        return json_content(fix_last(before, "a tidier last line"))

    llm_server.script(append_then_answer)
    assert run_job(job) == ("done", "spliced:1")
    assert window("Mel") == [
        *before[:-1],
        (before[-1][0], "a tidier last line"),
        *[(m["type"], m["data"]["content"]) for m in late],
    ]
    # A human message arrived while the LLM was thinking: the window is not clean.
    assert not RecentWindowState.objects.get(character__name="Mel").review_clean


def test_cancel_during_the_call_discards_the_result(client, llm_server):
    post(client, "cache", "Mel", english_messages(10))
    job = review_job(Character.objects.get(name="Mel"))
    before = window("Mel")
    answers: list[dict] = []

    def cancel_then_answer(body):
        answers.append(
            in_own_connection(
                lambda: Client().post("/cancel_correction/Mel", content_type="application/json").json()
            )
        )
        return json_content(fix_last(before, "should never be written"))

    llm_server.script(cancel_then_answer)
    assert run_job(job) == ("done", "cancelled")
    assert answers == [{"status": "cancelled"}]
    assert window("Mel") == before
