from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from facts.models import Fact
from nekomem.journal.models import Job
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_set
from recent.services import raw_log_append
from reflections.evidence import Signal
from reflections.models import Reflection, ReflectionCursor
from reflections.services import reflections_keyword_hook, reflections_rebuttal_tick, reflections_stage2
from reflections.services.retries import REBUTTAL_JOB
from reflections.services.signals import match_id, stage2_signals_apply
from tests.facts.factories import make_fact
from tests.reflections.factories import make_reflection
from tests.support.llm_server import error, json_content

pytestmark = pytest.mark.django_db


def confirmed(character, **fields):
    return make_reflection(
        character=character,
        status=Reflection.Status.CONFIRMED,
        reinforcement=1.0,
        rein_last_signal_at=timezone.now(),
        **fields,
    )


def test_suffix_matching_accepts_a_bare_id_but_not_an_ambiguous_or_foreign_one():
    known = ["reflection.ref_aaaa", "reflection.ref_bbbb"]
    assert match_id("ref_aaaa", known) == "reflection.ref_aaaa"
    assert match_id("reflection.ref_bbbb", known) == "reflection.ref_bbbb"
    assert match_id("aaaa", known) == "reflection.ref_aaaa"
    assert match_id("ref_cccc", known) is None and match_id("", known) is None


def test_stage2_reinforces_by_suffix_and_marks_the_batch(character, llm_server):
    target = confirmed(character)
    facts = [make_fact(character=character, text=f"阿凛又去画画了{i}", importance=6) for i in range(2)]
    llm_server.script(
        json_content(
            {
                "signals": [
                    {
                        "source_fact_id": facts[0].fact_id,
                        "target_id": target.reflection_id,
                        "target_type": "persona",
                        "signal": "reinforces",
                    },
                    {
                        "source_fact_id": "fact_unknown",
                        "target_id": target.reflection_id,
                        "signal": "reinforces",
                    },
                    {
                        "source_fact_id": facts[1].fact_id,
                        "target_id": "reflection.ref_nothere",
                        "signal": "negates",
                    },
                ]
            }
        )
    )
    result = reflections_stage2(character_id=character.pk)
    assert result.applied == 1 and result.marked
    target.refresh_from_db()
    assert target.reinforcement == pytest.approx(1.5) and target.user_fact_reinforce_count == 1
    assert Fact.objects.filter(signal_processed=False).count() == 0
    prompt = llm_server.bodies[0]["messages"][0]["content"]
    assert f"[reflection.{target.reflection_id}]" in prompt and "evidence_score=" in prompt


def test_stage2_batch_is_not_complete_when_a_target_left_the_pool(character):
    kept = confirmed(character)
    gone = confirmed(character)
    Reflection.objects.filter(pk=gone.pk).update(status=Reflection.Status.DENIED)
    signals = [
        (f"reflection.{kept.reflection_id}", Signal.REINFORCES),
        (f"reflection.{gone.reflection_id}", Signal.NEGATES),
    ]
    assert stage2_signals_apply(character_id=character.pk, signals=signals, now=timezone.now()) == (1, False)
    gone.refresh_from_db()
    assert gone.disputation == 0.0


def test_stage2_off_mode_moves_past_the_queue_without_a_call(character, llm_server):
    switch_set(name=POWERFUL_MEMORY, enabled=False)
    confirmed(character)
    make_fact(character=character, text="阿凛喜欢下雨天", importance=6)
    assert reflections_stage2(character_id=character.pk).marked
    assert llm_server.requests == [] and not Fact.objects.filter(signal_processed=False).exists()


def test_the_third_reinforcement_weighs_double(character, llm_server):
    target = confirmed(character, user_fact_reinforce_count=2)
    fact = make_fact(character=character, text="阿凛又画了一幅画", importance=6)
    llm_server.script(
        json_content(
            {
                "signals": [
                    {
                        "source_fact_id": fact.fact_id,
                        "target_id": target.reflection_id,
                        "signal": "reinforces",
                    }
                ]
            }
        )
    )
    reflections_stage2(character_id=character.pk)
    target.refresh_from_db()
    assert target.reinforcement == pytest.approx(2.0)


def test_negative_keyword_hook_disputes_the_targets_in_the_emotion_tier(character, llm_server):
    target = confirmed(character)
    llm_server.script(json_content({"targets": [{"target_id": target.reflection_id}]}))
    payload = {"messages": [{"type": "human", "data": {"content": "我不是那种人，你搞错了"}}]}
    assert reflections_keyword_hook(character_id=character.pk, payload=payload) == 1
    assert llm_server.requests[0].json["model"] == "test-emotion-model"
    target.refresh_from_db()
    assert target.disputation == 1.0


def test_no_keyword_no_call(character, llm_server):
    confirmed(character)
    payload = {"messages": [{"type": "human", "data": {"content": "today was lovely"}}]}
    assert reflections_keyword_hook(character_id=character.pk, payload=payload) == 0
    assert llm_server.requests == []


def say(character, at, text):
    raw_log_append(
        character_id=character.pk, messages=[{"type": "human", "data": {"content": text}}], timestamp=at
    )


def test_rebuttal_denies_without_disputation_and_moves_the_cursor(character, llm_server):
    target = confirmed(character)
    now = timezone.now()
    for i in range(25):
        say(character, now - timedelta(minutes=30) + timedelta(seconds=i), f"消息{i}")
    llm_server.script(
        json_content({"verdicts": [{"reflection_id": target.reflection_id, "verdict": "denied"}]})
    )
    reflections_rebuttal_tick(character_id=character.pk, now=now)
    prompt = llm_server.bodies[0]["messages"][0]["content"]
    assert "消息19" in prompt and "消息20" not in prompt  # 20 messages a batch
    target.refresh_from_db()
    assert target.status == Reflection.Status.DENIED and target.disputation == 0.0
    cursor = ReflectionCursor.objects.get(character=character)
    assert cursor.rebuttal_checked_until == now - timedelta(minutes=30) + timedelta(seconds=19)


def test_rebuttal_backs_off_and_gives_the_window_up_after_five_failures(character, llm_server):
    confirmed(character)
    now = timezone.now()
    say(character, now - timedelta(minutes=5), "随便聊聊")
    llm_server.fallback = lambda _b: error(500)
    llm_server.allow_unexpected = True
    for wait in (1, 2, 4, 8):
        assert reflections_rebuttal_tick(character_id=character.pk, now=now) == "failed: backoff"
        calls = len(llm_server.requests)
        # Within the back-off the window is not sent again.
        assert reflections_rebuttal_tick(character_id=character.pk, now=now) == "waiting: backoff"
        assert len(llm_server.requests) == calls
        now += timedelta(minutes=wait)
    assert reflections_rebuttal_tick(character_id=character.pk, now=now) == "failed: window given up"
    assert ReflectionCursor.objects.get(character=character).rebuttal_checked_until == now
    job = Job.objects.get(character=character, kind=REBUTTAL_JOB)
    assert (job.status, job.attempts) == ("dead", 5) and "500" in job.last_error


def test_rebuttal_off_mode_advances_the_cursor(character, llm_server):
    switch_set(name=POWERFUL_MEMORY, enabled=False)
    confirmed(character)
    now = timezone.now()
    say(character, now - timedelta(minutes=5), "不是这样")
    reflections_rebuttal_tick(character_id=character.pk, now=now)
    assert llm_server.requests == []
    assert ReflectionCursor.objects.get(character=character).rebuttal_checked_until == now
