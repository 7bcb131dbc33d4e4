"""Schema re-check (reference §3.5.6): one v1 entry a tick, reflections before facts, characters in
turn; the summary tier re-judges temporal_scope and event_when; 5 failed attempts give an entry up."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core.management import call_command

from facts.models import Fact
from nekomem.journal.models import Event, Job, WorkStatus
from nekomem.journal.sweep import work_sweep
from reflections.models import Reflection
from reflections.services import schema_recheck_tick
from reflections.services.recheck import RECHECK_JOB
from tests.characters.factories import CharacterFactory
from tests.facts.factories import make_fact
from tests.reflections.factories import make_reflection
from tests.support.llm_server import error, json_content

pytestmark = pytest.mark.django_db

CREATED = datetime(2024, 5, 1, 12, tzinfo=UTC)
T0 = datetime(2026, 12, 1, 12, tzinfo=UTC)
LAST_WEEK = {"start": {"offset": -1, "unit": "week"}, "end": None}


def v1_reflection(character, text: str = "主人上周去了海边", **fields) -> Reflection:
    return make_reflection(
        character=character, text=text, schema_version=1, temporal_scope=None, created_at=CREATED, **fields
    )


def v1_fact(character, text: str = "主人昨天去看了牙医") -> Fact:
    return make_fact(character=character, text=text, schema_version=1, created_at=CREATED)


def prompt(llm_server, n: int) -> str:
    return llm_server.requests[n].json["messages"][0]["content"]


def test_a_v1_reflection_gets_its_scope_and_event_time_then_a_fact(character, llm_server):
    fact = v1_fact(character)
    ref = v1_reflection(character)
    llm_server.script(
        json_content({"temporal_scope": "episode", "event_when": LAST_WEEK}),
        json_content({"event_when": {"start": {"offset": -1, "unit": "day"}, "end": None}}),
    )
    first = schema_recheck_tick(now=T0)
    assert (first.kind, first.outcome) == ("reflection", "rejudged")
    ref.refresh_from_db()
    assert (ref.temporal_scope, ref.schema_version) == ("episode", 2)
    assert ref.event_when_raw == LAST_WEEK and ref.event_start_at == CREATED - timedelta(weeks=1)
    body = llm_server.requests[0].json
    assert body["model"] == "test-summary-model"
    assert "2024-05-01" in prompt(llm_server, 0) and "主人上周去了海边" in prompt(llm_server, 0)
    event = Event.objects.get(type="reflection.state_changed", payload__reason="schema_recheck")
    assert event.payload["temporal_scope"] == "episode" and event.payload["schema_version"] == 2
    assert schema_recheck_tick(now=T0).kind == "fact"
    fact.refresh_from_db()
    assert fact.schema_version == 2 and fact.event_start_at == CREATED - timedelta(days=1)
    assert schema_recheck_tick(now=T0).outcome == "nothing"
    assert len(llm_server.requests) == 2


def test_replay_of_the_event_restores_the_rejudged_fields(character, llm_server):
    from reflections.handlers import replay_reflection_state_changed

    ref = v1_reflection(character)
    llm_server.script(json_content({"temporal_scope": "past", "event_when": LAST_WEEK}))
    schema_recheck_tick(now=T0)
    payload = Event.objects.get(type="reflection.state_changed").payload
    Reflection.objects.filter(pk=ref.pk).update(
        temporal_scope=None, schema_version=1, event_when_raw=None, event_start_at=None
    )
    replay_reflection_state_changed(character.pk, payload)
    ref.refresh_from_db()
    assert (ref.temporal_scope, ref.schema_version, ref.event_when_raw) == ("past", 2, LAST_WEEK)
    assert ref.event_start_at == CREATED - timedelta(weeks=1)


def test_five_failures_give_the_entry_up_and_the_next_one_runs(character, llm_server):
    stubborn = v1_reflection(character, "主人曾经很忙")
    after = v1_reflection(character, "主人去年搬了家")
    # An invalid scope is a failed attempt, like an error.
    llm_server.script(json_content({"temporal_scope": "forever"}), *[error(500)] * 4)
    now = T0
    outcomes = []
    for n in range(5):
        outcomes.append(schema_recheck_tick(now=now).outcome)
        if n < 4:  # backing off: the character waits for that entry, nothing is sent
            calls = len(llm_server.requests)
            assert schema_recheck_tick(now=now).outcome == "nothing" and len(llm_server.requests) == calls
        now += timedelta(hours=1)
    assert outcomes == ["failed"] * 4 + ["gave_up"]
    stubborn.refresh_from_db()
    assert stubborn.extra["recheck_attempts"] == 5 and stubborn.schema_version == 1
    assert Job.objects.get(key=f"reflection:{stubborn.pk}").status == WorkStatus.DEAD
    llm_server.script(json_content({"temporal_scope": "past", "event_when": None}))
    report = schema_recheck_tick(now=now)
    assert (report.entry_id, report.outcome) == (after.reflection_id, "rejudged")
    assert "主人去年搬了家" in prompt(llm_server, 5)


@pytest.mark.parametrize("kind", ["reflection", "fact"])
def test_a_given_up_entry_is_probed_again_every_five_hours(character, llm_server, kind):
    stubborn: Reflection | Fact
    if kind == "reflection":
        stubborn = v1_reflection(character, "主人曾经很忙")
        entry_id = stubborn.reflection_id
    else:
        stubborn = v1_fact(character)
        entry_id = stubborn.fact_id
    llm_server.script(*[error(500)] * 6)
    with time_machine.travel(T0, tick=False) as clock:
        outcomes = []
        for _ in range(5):
            outcomes.append(schema_recheck_tick().outcome)
            clock.shift(timedelta(hours=1))
        assert outcomes == ["failed"] * 4 + ["gave_up"]
        job = Job.objects.get(kind=RECHECK_JOB, key=f"{kind}:{stubborn.pk}")
        assert job.status == WorkStatus.DEAD

        clock.shift(timedelta(hours=3))  # 4 h after giving up: still given up
        assert work_sweep().probed == 0
        assert schema_recheck_tick().outcome == "nothing" and len(llm_server.requests) == 5

        clock.shift(timedelta(hours=1))  # 5 h: the probe's one attempt, which fails
        assert work_sweep().probed == 1
        report = schema_recheck_tick()
        assert (report.entry_id, report.outcome) == (entry_id, "gave_up")
        assert len(llm_server.requests) == 6
        assert Job.objects.get(pk=job.pk).status == WorkStatus.DEAD
        assert schema_recheck_tick().outcome == "nothing" and len(llm_server.requests) == 6

        clock.shift(timedelta(hours=5))  # the next probe succeeds
        assert work_sweep().probed == 1
        llm_server.script(json_content({"temporal_scope": "past", "event_when": None}))
        report = schema_recheck_tick()
    assert (report.entry_id, report.outcome) == (entry_id, "rejudged")
    stubborn.refresh_from_db()
    assert stubborn.schema_version == 2
    assert Job.objects.get(pk=job.pk).status == WorkStatus.DONE


def test_characters_take_turns(llm_server):
    one, two = CharacterFactory.create(name="一号"), CharacterFactory.create(name="二号")
    for n in range(2):
        v1_reflection(one, f"一号的主人第{n}件事")
        v1_reflection(two, f"二号的主人第{n}件事")
    llm_server.fallback = lambda body: json_content({"temporal_scope": "state", "event_when": None})
    served = [schema_recheck_tick(now=T0).character_id for _ in range(4)]
    assert served == [one.pk, two.pk, one.pk, two.pk]


def test_no_provider_waits_without_spending_an_attempt_then_runs(character, settings, llm_server):
    configured = settings.LLM_TIERS
    settings.LLM_TIERS = {tier: {} for tier in settings.LLM_TIER_NAMES}
    ref = v1_reflection(character)
    for _ in range(3):
        report = schema_recheck_tick(now=T0)
    assert (report.outcome, report.reason) == ("waiting", "no_provider:summary")
    job = Job.objects.get(kind=RECHECK_JOB)
    assert (job.status, job.waiting_reason, job.attempts) == ("waiting", "no_provider:summary", 0)
    ref.refresh_from_db()
    assert "recheck_attempts" not in ref.extra
    settings.LLM_TIERS = configured
    llm_server.script(json_content({"temporal_scope": "pattern", "event_when": None}))
    assert schema_recheck_tick(now=T0).outcome == "rejudged"
    ref.refresh_from_db()
    assert ref.temporal_scope == "pattern" and ref.schema_version == 2


def test_the_command_rechecks_one_character_with_progress(character, llm_server, capsys):
    v1_reflection(character)
    v1_fact(character)
    other = CharacterFactory.create(name="别人")
    untouched = v1_fact(other, "别人的主人昨天去看了牙医")
    llm_server.script(
        json_content({"temporal_scope": "episode", "event_when": LAST_WEEK}),
        json_content({"event_when": None}),
    )
    call_command("refine", character=character.name, only=["recheck"])
    assert "小天: schema re-check: 2 rejudged" in capsys.readouterr().out
    untouched.refresh_from_db()
    assert untouched.schema_version == 1
    assert not Reflection.objects.filter(character=character, schema_version=1).exists()
