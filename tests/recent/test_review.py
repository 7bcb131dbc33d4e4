"""Recent-history review (reference §3.1.5): gates, fingerprint splice, roles, strikes, config."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from nekomem.characters.models import Character
from nekomem.journal.jobs import job_run
from nekomem.journal.models import Job
from nekomem.runtime.switches import RECENT_AUTO_REVIEW, switch_set
from recent.compression import window_compress
from recent.jobs import REVIEW_JOB
from recent.models import RecentReviewState, RecentWindowState
from recent.review import Turn, plan_replacements, review_maybe_spawn
from tests.recent.factories import RecentReviewStateFactory
from tests.recent.scripting import dialogue_of, post, run_job, summary, window
from tests.support.dataset import english_messages
from tests.support.llm_server import json_content, truncated

pytestmark = pytest.mark.django_db


def seed(client, n: int = 10, name: str = "Mel") -> Character:
    post(client, "cache", name, english_messages(n))  # /cache never reviews
    return Character.objects.get(name=name)


def spawn_review(character: Character) -> Job:
    job = review_maybe_spawn(character_id=character.pk)
    assert job is not None
    return job


def corrected(rows: list[tuple[str, str]]) -> dict:
    return {"explanation": "tidied", "corrected_dialogue": [{"role": r, "content": c} for r, c in rows]}


# --- gates ---------------------------------------------------------------------------------------------


def test_review_starts_with_eight_messages_and_five_new_human_ones(client):
    character = seed(client, 10)
    job = spawn_review(character)
    assert job is not None and job.kind == REVIEW_JOB and job.status == "pending"
    assert review_maybe_spawn(character_id=character.pk) is None  # one already runs (and the interval)


def test_review_needs_eight_messages(client):
    character = seed(client, 7)
    assert review_maybe_spawn(character_id=character.pk) is None


def test_review_respects_switch_clean_flag_and_interval(client):
    character = seed(client, 10)
    switch_set(name=RECENT_AUTO_REVIEW, enabled=False)
    assert review_maybe_spawn(character_id=character.pk) is None
    switch_set(name=RECENT_AUTO_REVIEW, enabled=True)

    RecentWindowState.objects.filter(pk=character.pk).update(review_clean=True)
    assert review_maybe_spawn(character_id=character.pk) is None
    RecentWindowState.objects.filter(pk=character.pk).update(review_clean=False)

    RecentReviewState.objects.update_or_create(
        character=character, defaults={"last_started_at": timezone.now() - timedelta(seconds=30)}
    )
    assert review_maybe_spawn(character_id=character.pk) is None
    RecentReviewState.objects.filter(character=character).update(
        last_started_at=timezone.now() - timedelta(seconds=61)
    )
    assert review_maybe_spawn(character_id=character.pk) is not None


def test_few_new_human_messages_wait_unless_idle_for_thirty_minutes(client):
    character = seed(client, 12)
    positions = list(character.recent_messages.order_by("position").values_list("position", flat=True))
    # The last review saw all but the last 4 messages: only 2 new human messages since.
    RecentReviewStateFactory.create(character=character, cutoff_position=positions[-5])
    assert review_maybe_spawn(character_id=character.pk) is None

    Character.objects.filter(pk=character.pk).update(last_activity_at=timezone.now() - timedelta(minutes=31))
    assert review_maybe_spawn(character_id=character.pk) is not None


# --- the LLM call and the splice ------------------------------------------------------------------------


def test_review_rewrites_the_matched_slots_through_the_route(
    client, llm_server, django_capture_on_commit_callbacks
):
    messages = english_messages(10)
    fixed_last = "Thanks, Emily — I'll tell you about my weekend tomorrow."
    fixed_rows = [(m["type"], m["data"]["content"]) for m in messages[:-1]] + [("ai", fixed_last)]
    llm_server.script(json_content(corrected(fixed_rows)))

    with django_capture_on_commit_callbacks(execute=True):
        assert post(client, "process", "Mel", messages).json() == {"status": "processed"}

    assert window("Mel") == fixed_rows
    (body,) = llm_server.bodies
    assert body["model"] == "test-correction-model"
    assert "enable_thinking" not in body and "thinking" not in body  # the model's native default
    job = Job.objects.get(kind=REVIEW_JOB)
    assert (job.status, job.outcome) == ("done", "spliced:1")
    character = Character.objects.get(name="Mel")
    assert RecentWindowState.objects.get(character=character).review_clean
    assert RecentReviewState.objects.get(character=character).cutoff_position is not None


def test_shorter_correction_replaces_only_the_last_slots(client, llm_server):
    character = seed(client, 10)
    job = spawn_review(character)
    before = window("Mel")
    llm_server.script(json_content(corrected([("human", "edited human"), ("ai", "edited ai")])))

    assert run_job(job) == ("done", "spliced:2")
    assert window("Mel") == [*before[:-2], ("human", "edited human"), ("ai", "edited ai")]


def test_system_role_is_dropped_when_the_snapshot_has_no_memo(client, llm_server):
    character = seed(client, 10)
    job = spawn_review(character)
    before = window("Mel")
    llm_server.script(json_content(corrected([("system", "a memo out of nowhere"), ("ai", "edited ai")])))

    assert run_job(job) == ("done", "spliced:1")
    assert window("Mel") == [*before[:-1], ("ai", "edited ai")]


def test_system_role_edits_the_memo_when_the_snapshot_starts_with_it(client, llm_server):
    messages = [
        {"type": "system", "data": {"content": "Memo of the earlier conversation: old"}},
        *english_messages(9),
    ]
    post(client, "cache", "Mel", messages)
    job = spawn_review(Character.objects.get(name="Mel"))
    rows = [("system", "Memo of the earlier conversation: fixed")] + [
        (m["type"], m["data"]["content"]) for m in messages[1:]
    ]
    llm_server.script(json_content(corrected(rows)))

    assert run_job(job) == ("done", "spliced:1")
    assert window("Mel")[0] == ("system", "Memo of the earlier conversation: fixed")


def test_three_truncations_pause_review_until_the_window_shrinks(client, llm_server):
    character = seed(client, 21)
    state = None
    for strike in (1, 2, 3):
        RecentReviewState.objects.filter(character=character).update(last_started_at=None)
        job = review_maybe_spawn(character_id=character.pk)
        assert job is not None, f"strike {strike}"
        llm_server.script(truncated('{"explanation": "cut'))
        # A truncated reply is not retried: the same prompt would truncate again.
        assert run_job(job) == ("dead", f"truncated {strike}/3")
        state = RecentReviewState.objects.get(character=character)
        assert state.truncation_strikes == strike
    assert state is not None and state.paused_at_length == 21
    RecentReviewState.objects.filter(character=character).update(last_started_at=None)
    assert review_maybe_spawn(character_id=character.pk) is None

    # Compression shrinks the window to memo + 9: the pause lifts.
    switch_set(name=RECENT_AUTO_REVIEW, enabled=False)
    llm_server.script(summary("memo"))
    assert window_compress(character_id=character.pk).outcome == "spliced"
    switch_set(name=RECENT_AUTO_REVIEW, enabled=True)
    Character.objects.filter(pk=character.pk).update(last_activity_at=timezone.now() - timedelta(hours=1))
    assert review_maybe_spawn(character_id=character.pk) is not None
    assert RecentReviewState.objects.get(character=character).paused_at_length is None


def test_bad_reply_counts_an_attempt_and_changes_nothing(client, llm_server):
    character = seed(client, 10)
    job = spawn_review(character)
    before = window("Mel")
    llm_server.script(json_content({"explanation": "x", "corrected_dialogue": []}))

    assert run_job(job) == ("waiting", "")
    assert job.attempts == 1 and job.waiting_reason == "backoff" and "LLMBadOutput" in job.last_error
    assert window("Mel") == before


def test_review_request_carries_the_dialogue_as_roles(client, llm_server):
    character = seed(client, 10)
    job = spawn_review(character)
    llm_server.script(json_content(corrected([("ai", "x")])))
    run_job(job)

    sent = json.loads(dialogue_of(llm_server.bodies[0]))
    assert sent == [
        {"role": t, "content": c}
        for t, c in [(m["type"], m["data"]["content"]) for m in english_messages(10)]
    ]


# --- the fingerprint splice as plain logic ---------------------------------------------------------------


def turns_of(rows: list[tuple[str, str]], start: int = 0) -> list[Turn]:
    return [Turn(row_id=start + i, position=start + i, type=t, text=c) for i, (t, c) in enumerate(rows)]


def fixes(rows: list[tuple[str, str]]) -> list[Turn]:
    return [Turn(None, None, t, c) for t, c in rows]


ROWS = [("human", f"h{i}") if i % 2 == 0 else ("ai", f"a{i}") for i in range(10)]


def test_splice_finds_the_snapshot_before_appended_turns():
    current = turns_of([*ROWS, ("human", "new"), ("ai", "newer")])
    plan = plan_replacements(turns_of(ROWS), current, fixes([("human", "H8"), ("ai", "A9")]))
    assert isinstance(plan, list)
    assert [(slot.row_id, fix.text) for slot, fix in plan] == [(8, "H8"), (9, "A9")]


def test_splice_walks_back_only_over_matching_slots():
    current = turns_of([("system", "memo"), *ROWS[6:]], start=5)  # a compression replaced the head
    plan = plan_replacements(turns_of(ROWS), current, fixes([(t, c.upper()) for t, c in ROWS]))
    assert isinstance(plan, list)
    assert [slot.text for slot, _ in plan] == ["h6", "a7", "h8", "a9"]  # never the memo


def test_splice_is_white_when_the_last_messages_changed():
    current = turns_of([*ROWS[:-1], ("ai", "edited by hand")])
    assert plan_replacements(turns_of(ROWS), current, fixes([("ai", "x")])) == "white"


def test_splice_never_changes_who_spoke():
    plan = plan_replacements(turns_of(ROWS), turns_of(ROWS), fixes([("human", "h8"), ("human", "a9?")]))
    assert plan == "misaligned"


# --- cancel and config ----------------------------------------------------------------------------------


def test_cancel_without_a_review_reports_no_task(client):
    seed(client, 2)
    assert client.post("/cancel_correction/Mel", content_type="application/json").json() == {
        "status": "no_task"
    }
    assert client.post("/cancel_correction/Nobody", content_type="application/json").json() == {
        "status": "no_task"
    }


def test_cancel_stops_a_pending_review(client):
    character = seed(client, 10)
    job = spawn_review(character)
    assert client.post("/cancel_correction/Mel", content_type="application/json").json() == {
        "status": "cancelled"
    }
    job.refresh_from_db()
    assert (job.status, job.outcome) == ("done", "cancelled")
    assert job_run(job_id=job.pk) == "busy"


def test_review_config_api(client):
    assert client.get("/api/v1/review_config").json() == {"enabled": True}
    response = client.post("/api/v1/review_config", {"enabled": False}, content_type="application/json")
    assert response.json() == {"enabled": False}
    assert client.get("/api/v1/review_config").json() == {"enabled": False}
    bad = client.post("/api/v1/review_config", {"enabled": "yes"}, content_type="application/json")
    assert bad.status_code == 400
    assert client.get("/api/v1/review_config").json() == {"enabled": False}
