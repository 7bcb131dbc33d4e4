from __future__ import annotations

import pytest

from facts.models import Fact
from nekomem.journal.models import OutboxOp
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_set
from tests.facts.test_extraction import fact_reply, prompt_of
from tests.support.llm_server import error

pytestmark = pytest.mark.django_db


def test_off_mode_extracts_per_turn_inside_the_post_turn_op(
    post_history, llm_server, django_capture_on_commit_callbacks
):
    switch_set(name=POWERFUL_MEMORY, enabled=False)
    llm_server.script(fact_reply("阿凛的生日是三月三日", importance=10))
    with django_capture_on_commit_callbacks(execute=True):
        response = post_history("cache", "小天", ("human", "我的生日是三月三日"), ("ai", "记住啦"))
    assert response.status_code == 200
    fact = Fact.objects.get(character__name="小天")
    assert fact.text == "阿凛的生日是三月三日" and fact.importance == 10
    assert "记住啦" not in prompt_of(llm_server.bodies[0])
    assert OutboxOp.objects.get().status == OutboxOp.Status.DONE


def test_off_mode_failure_leaves_the_op_waiting_for_its_retry(
    post_history, llm_server, django_capture_on_commit_callbacks
):
    switch_set(name=POWERFUL_MEMORY, enabled=False)
    llm_server.script(error(503), error(503), error(503))
    with django_capture_on_commit_callbacks(execute=True):
        post_history("cache", "小天", ("human", "我的生日是三月三日"))
    op = OutboxOp.objects.get()
    assert (op.status, op.waiting_reason, op.attempts) == (OutboxOp.Status.WAITING, "backoff", 1)
    assert op.next_attempt_at is not None
    assert Fact.objects.count() == 0


def test_on_mode_leaves_the_turn_to_the_batched_loop(
    post_history, llm_server, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        post_history("cache", "小天", ("human", "我的生日是三月三日"))
    assert llm_server.requests == [] and Fact.objects.count() == 0


def test_off_mode_without_a_provider_waits_then_runs_once_one_is_configured(
    post_history, llm_server, settings, django_capture_on_commit_callbacks
):
    from nekomem.journal.sweep import work_sweep
    from tests.support.llm_server import json_content

    switch_set(name=POWERFUL_MEMORY, enabled=False)
    provider = settings.LLM_TIERS
    settings.LLM_TIERS = {tier: {"base_url": "", "api_key": "", "model": ""} for tier in provider}
    with django_capture_on_commit_callbacks(execute=True):
        assert post_history("cache", "小天", ("human", "我的生日是三月三日")).json()["count"] == 1
    op = OutboxOp.objects.get()
    assert op.status == OutboxOp.Status.WAITING and op.attempts == 0
    assert op.waiting_reason == "no_provider:summary"
    assert llm_server.requests == []
    assert work_sweep().ops == 0  # nothing to do while there is still no provider

    settings.LLM_TIERS = provider
    llm_server.script(json_content([{"text": "阿凛的生日是三月三日", "importance": 10, "entity": "master"}]))
    assert work_sweep().ops == 1
    op.refresh_from_db()
    assert op.status == OutboxOp.Status.DONE and op.attempts == 0
    assert Fact.objects.get(character__name="小天").text == "阿凛的生日是三月三日"
