from __future__ import annotations

from datetime import timedelta

import pytest

from facts.models import ExtractionCursor, Fact
from facts.services import facts_extraction_tick
from facts.services.extraction import EXTRACTION_JOB, TickResult
from nekomem.journal.models import Job
from nekomem.journal.work import backoff_delay
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_set
from tests.facts.conftest import T0, minutes, say
from tests.support.llm_server import error, json_content, text

pytestmark = pytest.mark.django_db


def fact_reply(*texts: str, entity: str = "master", importance: int = 7) -> object:
    return json_content(
        [{"text": t, "importance": importance, "entity": entity, "event_when": None} for t in texts]
    )


def prompt_of(body: dict) -> str:
    return "\n".join(m["content"] for m in body["messages"])


def cursor(character) -> ExtractionCursor:
    return ExtractionCursor.objects.get(character=character)


def test_cold_start_waits_for_quiet_then_extracts_user_messages_only(character, llm_server):
    say(character, T0, ("human", "我叫阿凛，下周三过生日"), ("ai", "我是小天，我最喜欢晒太阳"))
    assert facts_extraction_tick(character_id=character.pk, now=T0 + timedelta(seconds=3)).ran_a is False
    assert llm_server.requests == []

    llm_server.script(fact_reply("阿凛下周三过生日"))
    result = facts_extraction_tick(character_id=character.pk, now=T0 + timedelta(seconds=15))

    assert result.ran_a and result.created == 1
    prompt = prompt_of(llm_server.bodies[0])
    assert "下周三过生日" in prompt and "晒太阳" not in prompt  # user messages only
    assert "======以下为对话======" in prompt
    fact = Fact.objects.get(character=character)
    assert fact.source == "user_observation" and fact.signal_processed is False
    assert fact.fact_id.startswith("fact_20240501") and len(fact.fact_id.split("_")[-1]) == 8
    assert cursor(character).last_a_message_at == T0


def test_cold_start_ignores_turns_older_than_ten_minutes(character, llm_server):
    say(character, T0, ("human", "很久以前的话"))
    result = facts_extraction_tick(character_id=character.pk, now=T0 + minutes(11))
    assert result.ran_a is False and llm_server.requests == []


def test_warm_trigger_needs_ten_turns_or_five_minutes(character, llm_server):
    llm_server.script(fact_reply("阿凛喜欢猫"))
    say(character, T0, ("human", "我喜欢猫"))
    facts_extraction_tick(character_id=character.pk, now=T0 + minutes(1))
    checked = T0 + minutes(1)

    for i in range(9):
        say(character, checked + minutes(0.1 * (i + 1)), ("human", f"第{i}句闲聊"), ("ai", "嗯嗯"))
    assert facts_extraction_tick(character_id=character.pk, now=checked + minutes(2)).ran_a is False

    say(character, checked + minutes(1.5), ("human", "第十句：我养了一只橘猫"))
    llm_server.script(fact_reply("阿凛养了一只橘猫"))
    assert facts_extraction_tick(character_id=character.pk, now=checked + minutes(2)).ran_a is True
    assert "第0句闲聊" in prompt_of(llm_server.bodies[1])
    assert "我喜欢猫" not in prompt_of(llm_server.bodies[1])  # the window starts after the cursor

    say(character, checked + minutes(3), ("human", "我明天要去爬山"))
    assert facts_extraction_tick(character_id=character.pk, now=checked + minutes(4)).ran_a is False
    llm_server.script(fact_reply("阿凛明天要去爬山"), json_content([]))  # 3rd success: path B too
    assert facts_extraction_tick(character_id=character.pk, now=checked + minutes(7.1)).ran_b is True


def window_job(character, key: str = "a") -> Job:
    return Job.objects.filter(character=character, kind=EXTRACTION_JOB, key=key).latest("created_at", "pk")


def test_failure_keeps_the_cursor_and_five_failures_force_it_forward(character, llm_server):
    say(character, T0, ("human", "我喜欢猫"))
    llm_server.script(fact_reply("阿凛喜欢猫"))
    assert facts_extraction_tick(character_id=character.pk, now=T0 + minutes(1)).ran_a
    say(character, T0 + minutes(2), ("human", "我在学日语"))
    now = T0 + minutes(7)  # five minutes after the last check
    llm_server.script(*[error(500)] * 3)  # one tick = one call with 3 attempts
    facts_extraction_tick(character_id=character.pk, now=now)
    state, job = cursor(character), window_job(character)
    assert state.last_a_message_at == T0
    assert (job.status, job.waiting_reason, job.attempts) == ("waiting", "backoff", 1)
    assert job.next_attempt_at == now + backoff_delay(1)
    # Within the back-off the tick does not call the LLM again.
    assert facts_extraction_tick(character_id=character.pk, now=now).reason == "waiting: backoff"

    llm_server.script(*[error(500)] * 12)
    for _ in range(4):
        now = window_job(character).next_attempt_at or now
        facts_extraction_tick(character_id=character.pk, now=now)
    state, job = cursor(character), window_job(character)
    assert state.last_a_message_at == T0 + minutes(2)  # dead-lettered, the loop stays live
    assert (job.status, job.attempts) == ("dead", 5) and "FactExtractionFailed" in job.last_error
    assert list(Fact.objects.values_list("text", flat=True)) == ["阿凛喜欢猫"]


def test_a_failed_cold_start_window_that_slides_out_of_the_lookback_is_dropped(character, llm_server):
    say(character, T0, ("human", "我在学日语"))
    llm_server.script(*[error(500)] * 3)
    facts_extraction_tick(character_id=character.pk, now=T0 + minutes(1))
    assert window_job(character).attempts == 1
    result = facts_extraction_tick(character_id=character.pk, now=T0 + minutes(11))
    assert result.reason == "no new user turns"
    assert (window_job(character).status, window_job(character).outcome) == ("done", "cancelled")


def test_no_provider_waits_with_a_reason_and_burns_no_attempt(character, settings):
    settings.LLM_TIERS = {tier: {} for tier in settings.LLM_TIER_NAMES}
    say(character, T0, ("human", "我在学日语"))
    for _ in range(6):
        result = facts_extraction_tick(character_id=character.pk, now=T0 + minutes(1))
    job = window_job(character)
    assert result.reason == "waiting: no_provider:summary"
    assert (job.status, job.waiting_reason, job.attempts) == ("waiting", "no_provider:summary", 0)
    assert cursor(character).last_a_message_at is None


def test_non_array_reply_counts_as_nothing_and_advances(character, llm_server):
    say(character, T0, ("human", "今天天气不错"))
    llm_server.script(text('{"facts": "none"}'))
    assert facts_extraction_tick(character_id=character.pk, now=T0 + minutes(1)).ran_a is True
    assert Fact.objects.count() == 0 and cursor(character).last_a_message_at == T0


def test_path_b_runs_on_every_third_success_with_the_known_facts_pool(character, llm_server):
    def turn(i: int) -> TickResult:
        at = T0 + minutes(10 * i)
        say(
            character,
            at,
            ("human", f"第{i}次聊天，我今天去了公园"),
            ("ai", f"我是小天，我第{i}次告诉你我喜欢下雨天"),
        )
        llm_server.script(fact_reply(f"阿凛第{i}天去了公园"))
        return facts_extraction_tick(character_id=character.pk, now=at + minutes(1))

    assert turn(0).ran_b is False
    assert turn(1).ran_b is False
    at = T0 + minutes(20)
    say(character, at, ("human", "第2次聊天"), ("ai", "我是小天，我其实很怕打雷"))
    llm_server.script(fact_reply("阿凛第2天聊天"), fact_reply("小天很怕打雷", entity="neko"))
    result = facts_extraction_tick(character_id=character.pk, now=at + minutes(1))

    assert result.ran_a and result.ran_b
    b_prompt = prompt_of(llm_server.bodies[-1])
    assert "很怕打雷" in b_prompt and "assistant |" in b_prompt
    assert "阿凛第2天聊天" in b_prompt  # path A's facts are in the known pool
    disclosed = Fact.objects.get(text="小天很怕打雷")
    assert disclosed.source == "ai_disclosure" and disclosed.signal_processed is True
    assert cursor(character).last_b_check_at == at


def test_relative_event_when_resolves_against_created_at(character, llm_server):
    say(character, T0, ("human", "我上个月搬家了，下周要出差三天"))
    llm_server.script(
        json_content(
            [
                {
                    "text": "阿凛上个月搬家了",
                    "importance": 6,
                    "entity": "master",
                    "event_when": {"start": {"offset": -1, "unit": "month"}, "end": None},
                },
                {
                    "text": "阿凛下周出差",
                    "importance": "12",
                    "entity": "user",
                    "event_when": {
                        "start": {"offset": 1, "unit": "week"},
                        "end": {"offset": 10, "unit": "day"},
                    },
                },
                {"text": "阿凛有点累", "importance": "x", "entity": "robot", "event_when": "yesterday"},
            ]
        )
    )
    now = T0 + minutes(1)
    facts_extraction_tick(character_id=character.pk, now=now)
    moved, trip, tired = (
        Fact.objects.get(text=t) for t in ("阿凛上个月搬家了", "阿凛下周出差", "阿凛有点累")
    )
    assert moved.event_start_at == now - timedelta(days=30) and moved.event_end_at is None
    assert trip.event_start_at == now + timedelta(weeks=1) and trip.event_end_at == now + timedelta(days=10)
    assert trip.importance == 10 and trip.entity == "master"
    assert tired.importance == 5 and tired.entity == "master" and tired.event_start_at == now


def test_powerful_memory_off_pauses_the_batched_loop(character, llm_server):
    switch_set(name=POWERFUL_MEMORY, enabled=False)
    say(character, T0, ("human", "我喜欢猫"))
    result = facts_extraction_tick(character_id=character.pk, now=T0 + minutes(10))
    assert result.ran_a is False and llm_server.requests == []
    assert cursor(character).last_a_message_at == T0  # so turning it back on does not replay them
