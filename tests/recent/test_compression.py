"""Recent-window compression through the routes and the real loopback LLM server (reference §3.1)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from nekomem.journal.models import Job
from nekomem.journal.sweep import work_sweep
from nekomem.journal.work import ready_tiers, work_due
from nekomem.language.counting import count_tokens
from nekomem.runtime.switches import RECENT_AUTO_REVIEW, switch_set
from recent.compression import INPUT_BUDGET_TOKENS, window_compress
from recent.jobs import COMPRESS_JOB
from recent.models import RecentMeta
from recent.prompts import MEMO_PREFIX, stale_hint_text
from tests.characters.factories import CharacterFactory
from tests.recent.factories import RecentMetaFactory
from tests.recent.scripting import contents, dialogue_of, summary, system_text, user_text, window
from tests.support.dataset import as_messages, conversation, english_messages, long_english_chat, turns
from tests.support.llm_server import TEST_API_KEY, error, json_content

pytestmark = pytest.mark.django_db

EN_MEMO = MEMO_PREFIX["en"]


@pytest.fixture(autouse=True)
def _review_off(db):
    # These tests count summary calls; reviews have their own tests.
    switch_set(name=RECENT_AUTO_REVIEW, enabled=False)


def test_twenty_messages_stay_verbatim(client, llm_server, run_commits):
    messages = english_messages(20)
    assert run_commits(client, "process", "Mel", messages).json() == {"status": "processed"}
    assert window("Mel") == [(m["type"], m["data"]["content"]) for m in messages]
    assert llm_server.requests == []
    assert not Job.objects.filter(kind=COMPRESS_JOB).exists()


def test_twenty_one_messages_become_one_memo_and_the_last_nine(client, llm_server, run_commits):
    messages = english_messages(21)
    llm_server.script(summary("Emily and Mel caught up."))

    assert run_commits(client, "process", "Mel", messages).json() == {"status": "processed"}

    assert window("Mel") == [("system", EN_MEMO + "Emily and Mel caught up.")] + [
        (m["type"], m["data"]["content"]) for m in messages[-9:]
    ]
    (body,) = llm_server.bodies
    assert body["model"] == "test-summary-model"
    assert body["enable_thinking"] is False  # compression runs with thinking off
    lines = dialogue_of(body).split("\n")
    assert lines == [
        f"{'Master' if m['type'] == 'human' else 'Mel'} | {m['data']['content']}" for m in messages[:12]
    ]
    job = Job.objects.get(kind=COMPRESS_JOB)
    assert (job.status, job.outcome, job.attempts) == ("done", "spliced", 0)
    # The first compression sets the stale-hint anchor.
    assert RecentMeta.objects.get(character__name="Mel").last_past_block_update_at is not None


def test_cache_never_compresses(client, llm_server, run_commits):
    messages = english_messages(25)
    assert run_commits(client, "cache", "Mel", messages).json() == {"status": "cached", "count": 25}
    assert len(window("Mel")) == 25
    assert llm_server.requests == []


def test_settle_compresses_what_cache_appended(client, llm_server, run_commits):
    messages = english_messages(22)
    run_commits(client, "cache", "Mel", messages)
    llm_server.script(summary("memo after settle"))
    assert run_commits(client, "settle", "Mel", []).json() == {"status": "settled"}
    assert window("Mel")[0] == ("system", EN_MEMO + "memo after settle")
    assert contents(messages[-9:]) == [c for _, c in window("Mel")[1:]]


def test_old_memo_is_summarised_into_the_new_one_in_chinese(client, llm_server, run_commits):
    messages = as_messages(conversation("memorybank-cn")[:32])
    llm_server.script(summary("第一次的备忘录"), summary("第二次的备忘录"))

    run_commits(client, "process", "小天", messages[:21], language="zh-CN")
    assert window("小天")[0] == ("system", "先前对话的备忘录: 第一次的备忘录")
    run_commits(client, "process", "小天", messages[21:], language="zh-CN")

    assert window("小天") == [("system", "先前对话的备忘录: 第二次的备忘录")] + [
        (m["type"], m["data"]["content"]) for m in messages[-9:]
    ]
    second = llm_server.bodies[1]
    assert dialogue_of(second).startswith("先前对话的备忘录: 第一次的备忘录\n")
    assert "主人 | " in dialogue_of(second)  # the default master name in zh


def test_renew_compresses_before_answering_without_a_job(client, llm_server, run_commits):
    llm_server.script(summary("renewed memo"))
    assert run_commits(client, "renew", "Mel", english_messages(21)).json() == {"status": "processed"}
    assert window("Mel")[0] == ("system", EN_MEMO + "renewed memo")
    assert not Job.objects.filter(kind=COMPRESS_JOB).exists()


def test_renew_that_could_not_compress_says_why_and_leaves_it_to_a_job(client, llm_server, run_commits):
    # Three empty replies for /renew's own attempt, three more for the background job it requests.
    llm_server.script(*[json_content({"summary": ""})] * 6)
    answer = run_commits(client, "renew", "Mel", english_messages(21)).json()
    assert answer == {"status": "processed", "compressed": False, "compression_reason": "failed:LLMBadOutput"}
    assert len(window("Mel")) == 21
    job = Job.objects.get(kind=COMPRESS_JOB)
    assert (job.status, job.waiting_reason) == ("waiting", "backoff")


def test_long_summary_gets_a_second_stage(client, llm_server, run_commits):
    long_summary = " ".join(t["text"] for t in long_english_chat()[:80])
    assert count_tokens(long_summary) > 1000
    llm_server.script(summary(long_summary), summary("short memo"))

    run_commits(client, "process", "Mel", english_messages(21))

    assert window("Mel")[0] == ("system", EN_MEMO + "short memo")
    further = llm_server.bodies[1]
    assert "500" in system_text(further)
    assert user_text(further) == long_summary


def test_stale_anchor_injects_the_hint_and_moves(client, llm_server, run_commits):
    character = CharacterFactory.create(name="Mel", language="en", master_name="")
    old = timezone.now() - timedelta(hours=2)
    RecentMetaFactory.create(character=character, last_past_block_update_at=old)
    llm_server.script(summary("memo"))

    run_commits(client, "process", "Mel", english_messages(21))

    assert user_text(llm_server.bodies[0]).startswith(stale_hint_text("en"))
    anchor = RecentMeta.objects.get(character=character).last_past_block_update_at
    assert anchor is not None and anchor > old


def test_fresh_anchor_gets_no_hint_and_stays(client, llm_server, run_commits):
    character = CharacterFactory.create(name="Mel", language="en", master_name="")
    recent = timezone.now() - timedelta(minutes=10)
    RecentMetaFactory.create(character=character, last_past_block_update_at=recent)
    llm_server.script(summary("memo"))

    run_commits(client, "process", "Mel", english_messages(21))

    assert stale_hint_text("en") not in user_text(llm_server.bodies[0])
    assert RecentMeta.objects.get(character=character).last_past_block_update_at == recent


def test_oversized_history_is_map_reduced_without_splitting_a_message(client, llm_server, run_commits):
    messages = english_messages(420)
    run_commits(client, "cache", "Mel", messages)
    chunk_count = 0

    def answer(body):
        nonlocal chunk_count
        if dialogue_of(body).startswith("part "):
            return summary("final memo")
        chunk_count += 1
        return summary(f"part {chunk_count}")

    llm_server.fallback = answer
    run_commits(client, "settle", "Mel", [])

    assert window("Mel")[0] == ("system", EN_MEMO + "final memo")
    chunks = [dialogue_of(b) for b in llm_server.bodies[:-1]]
    assert len(chunks) == chunk_count >= 2
    assert all(count_tokens(chunk) <= INPUT_BUDGET_TOKENS for chunk in chunks)
    head_lines = [
        f"{'Master' if m['type'] == 'human' else 'Mel'} | {m['data']['content']}" for m in messages[:-9]
    ]
    # Every head message lands whole in exactly one chunk, in order.
    assert [line for chunk in chunks for line in chunk.split("\n")] == head_lines
    assert dialogue_of(llm_server.bodies[-1]) == "\n".join(f"part {i}" for i in range(1, chunk_count + 1))


def test_reduce_stops_at_depth_three_then_truncates(client, llm_server, run_commits):
    run_commits(client, "cache", "Mel", english_messages(420))
    bulky = " ".join(t["text"] for t in long_english_chat()[:220])  # about 7k tokens
    assert 4000 < count_tokens(bulky) < INPUT_BUDGET_TOKENS

    def answer(body):
        return summary("short memo") if "500" in system_text(body) else summary(bulky)

    llm_server.fallback = answer
    run_commits(client, "settle", "Mel", [])

    summarise_calls = [b for b in llm_server.bodies if "500" not in system_text(b)]
    maps = sum(1 for b in summarise_calls if dialogue_of(b).startswith(("Master | ", "Mel | ")))
    # Each reduce round gets one partial per chunk (they never shrink), so: maps, 3 rounds, final.
    assert len(summarise_calls) == maps * 4 + 1
    assert count_tokens(dialogue_of(summarise_calls[-1])) <= INPUT_BUDGET_TOKENS
    assert window("Mel")[0] == ("system", EN_MEMO + "short memo")  # the 5k summary went to stage two


def test_failure_keeps_raw_history_and_never_writes_an_empty_memo(client, llm_server, run_commits):
    messages = english_messages(20)
    llm_server.script(summary("first memo"))
    run_commits(client, "process", "Mel", [*english_messages(1, start=100), *messages])
    before = window("Mel")
    assert before[0] == ("system", EN_MEMO + "first memo")

    llm_server.script(*[json_content({"summary": ""})] * 3)  # three empty replies: no usable summary
    newer = english_messages(11, start=200)
    assert run_commits(client, "process", "Mel", newer).json() == {"status": "processed"}

    assert window("Mel") == before + [(m["type"], m["data"]["content"]) for m in newer]
    job = Job.objects.filter(kind=COMPRESS_JOB).first()
    assert job is not None
    assert (job.status, job.waiting_reason, job.attempts) == ("waiting", "backoff", 1)
    assert "LLMBadOutput" in job.last_error


def test_provider_errors_leave_history_then_retries_dead_letter_into_the_hard_cap(
    client, llm_server, run_commits
):
    llm_server.fallback = lambda body: error(500, message=f"upstream rejected key {TEST_API_KEY}")
    llm_server.allow_unexpected = True
    # Every fixture turn, four times over: 40 blocks that together pass the 60k-token hard cap.
    pool = [t["text"] for name in ("memorybank-cn", "memorybank-en") for t in turns(name)] * 4
    blocks = [" ".join(pool[i::40]) for i in range(40)]
    messages: list[dict[str, Any]] = [{"type": "system", "data": {"content": EN_MEMO + "kept memo"}}] + [
        {"type": "human" if i % 2 == 0 else "ai", "data": {"content": block}}
        for i, block in enumerate(blocks)
    ]
    assert sum(count_tokens(m["data"]["content"]) for m in messages) > 60000

    assert run_commits(client, "process", "Mel", messages).json() == {"status": "processed"}
    job = Job.objects.filter(kind=COMPRESS_JOB).first()
    assert job is not None
    assert (job.status, job.waiting_reason, job.attempts) == ("waiting", "backoff", 1)
    assert len(window("Mel")) == 41

    for expected_attempts in (2, 3, 4):
        assert work_sweep().jobs == 0  # the back-off is not over yet
        work_sweep(now=job.next_attempt_at)
        job.refresh_from_db()
        assert (job.status, job.waiting_reason, job.attempts) == ("waiting", "backoff", expected_attempts)
        assert len(window("Mel")) == 41  # nothing is dropped while the retry is still alive
    work_sweep(now=job.next_attempt_at)
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("dead", 5)
    assert "HTTP 500" in job.last_error and TEST_API_KEY not in job.last_error

    capped = window("Mel")
    assert capped[0] == ("system", EN_MEMO + "kept memo")
    assert capped[-10:] == [(m["type"], m["data"]["content"]) for m in messages[-10:]]
    assert 11 <= len(capped) < 41
    assert sum(count_tokens(c) for _, c in capped) <= 60000


def test_no_provider_parks_the_job_with_its_reason_and_routes_still_answer(
    client, llm_server, run_commits, settings
):
    configured = settings.LLM_TIERS
    settings.LLM_TIERS = {}
    messages = english_messages(25)

    assert run_commits(client, "process", "Mel", messages).json() == {"status": "processed"}
    # /renew says it could not compress, and why; the original's key stays as it was.
    assert run_commits(client, "renew", "Mel", english_messages(2, start=30)).json() == {
        "status": "processed",
        "compressed": False,
        "compression_reason": "no_provider:summary",
    }
    assert client.get("/new_dialog/Mel").status_code == 200
    job = Job.objects.get(kind=COMPRESS_JOB)
    assert (job.status, job.attempts, job.waiting_reason) == ("waiting", 0, "no_provider:summary")
    later = timezone.now() + timedelta(days=1)
    # Waiting costs nothing while there is no provider, however long it waits.
    assert not work_due(Job, now=later, grace=timedelta(0), ready_tiers=ready_tiers()).exists()
    assert len(window("Mel")) == 27

    settings.LLM_TIERS = configured
    llm_server.script(summary("memo once configured"))
    assert work_sweep().jobs == 1
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("done", 0)
    assert window("Mel")[0] == ("system", EN_MEMO + "memo once configured")
    assert len(window("Mel")) == 10


def test_api_key_never_reaches_logs(client, llm_server, run_commits, caplog):
    caplog.set_level("DEBUG")
    llm_server.script(error(401, message=f"bad key {TEST_API_KEY}"), summary("memo"))
    run_commits(client, "process", "Mel", english_messages(21))
    work_sweep(now=Job.objects.get(kind=COMPRESS_JOB).next_attempt_at)

    assert window("Mel")[0] == ("system", EN_MEMO + "memo")
    assert "recent compress character=" in caplog.text  # the logs did run
    assert TEST_API_KEY not in caplog.text
    assert all(TEST_API_KEY not in job.last_error for job in Job.objects.all())


def test_compression_below_threshold_makes_no_call(llm_server):
    character = CharacterFactory.create(name="Mel", master_name="")
    assert window_compress(character_id=character.pk).outcome == "not_needed"
    assert llm_server.requests == []
