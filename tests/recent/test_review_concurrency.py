"""The review against real concurrent writes and cancels made while the LLM "thinks", and its state
row written from two workers at once."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.test import Client

from nekomem.characters.locks import character_row_ensure
from nekomem.characters.models import Character
from nekomem.journal.models import Job
from recent.jobs import REVIEW_JOB, recent_job_request
from recent.models import RecentReviewState, RecentWindowState
from recent.review import _strike, review_maybe_spawn
from tests.characters.factories import CharacterFactory
from tests.recent.scripting import in_own_connection, post, run_job, window
from tests.support.concurrency import (
    create_while_locked,
    on_own_connection,
    postgresql_only,
    wait_until_waiting,
)
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


@postgresql_only
def test_a_strike_arriving_while_the_review_state_is_made_under_the_lock_does_not_deadlock():
    # A truncated review counts its strike while review_maybe_spawn, holding the character lock,
    # makes the same state row: the strike's insert used to deadlock with it at COMMIT.
    character = CharacterFactory.create()

    raced = create_while_locked(
        character_id=character.pk,
        create=lambda: _strike(character_id=character.pk, window_length=10),
        then=lambda: review_maybe_spawn(character_id=character.pk),
    )

    assert raced.creator_waited
    assert raced.errors == []
    assert raced.created == 1
    assert list(
        RecentReviewState.objects.filter(character=character).values_list("truncation_strikes", flat=True)
    ) == [1]


@postgresql_only
def test_two_strikes_at_once_count_two():
    # The same job run twice (a lease expired under a slow reply): each run's strike counts.
    character = CharacterFactory.create()
    with transaction.atomic():
        character_row_ensure(RecentReviewState, character.pk)
    second = []

    def first_strike_held_open() -> int:
        with transaction.atomic():
            strikes = _strike(character_id=character.pk, window_length=10)
            second.append(on_own_connection(lambda: _strike(character_id=character.pk, window_length=10)))
            assert wait_until_waiting(lambda: second[0].pid)
        return strikes

    first = on_own_connection(first_strike_held_open).join()

    assert (first, second[0].join()) == (1, 2)
    assert RecentReviewState.objects.get(character=character).truncation_strikes == 2
