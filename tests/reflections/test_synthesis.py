from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from facts.models import Fact
from nekomem.journal.models import Event, Job
from nekomem.journal.sweep import jobs_self_heal_probe
from reflections.models import Reflection
from reflections.services import reflection_synthesize
from reflections.services.records import reflection_id_for
from reflections.services.retries import SYNTHESIS_JOB
from tests.facts.factories import make_fact
from tests.support.llm_server import error, json_content

pytestmark = pytest.mark.django_db


def synthesis_reply(text: str = "阿凛是个喜欢安静生活的人", **fields: object) -> object:
    body: dict[str, object] = {
        "reflection": text,
        "entity": "master",
        "relation_type": "trait",
        "temporal_scope": "pattern",
        "subject": "生活方式",
        "event_when": None,
    }
    body.update(fields)
    return json_content(body)


def facts_for(character, n: int, importance: int = 6, start: int = 0) -> list[Fact]:
    base = timezone.now() - timedelta(hours=1)
    return [
        make_fact(
            character=character,
            text=f"阿凛喜欢第{start + i}件安静的事",
            importance=importance,
            created_at=base + timedelta(minutes=i),
        )
        for i in range(n)
    ]


def test_five_important_facts_become_one_pending_reflection_and_are_absorbed(character, llm_server):
    facts = [
        *facts_for(character, 4),
        make_fact(character=character, text="阿凛的生日是三月三日", importance=9),
    ]
    make_fact(character=character, text="阿凛随口说天气不错", importance=3)
    llm_server.script(synthesis_reply())

    result = reflection_synthesize(character_id=character.pk)

    reflection = Reflection.objects.get(character=character)
    assert result.reflection is not None and reflection.status == Reflection.Status.PENDING
    assert reflection.reflection_id == reflection_id_for([f.fact_id for f in facts])
    assert reflection.source_fact_ids == sorted(f.fact_id for f in facts)
    # Importance 9 seeds R at 0.6 with its clock; the cool-down starts at creation.
    assert reflection.reinforcement == pytest.approx(0.6) and reflection.rein_last_signal_at is not None
    assert reflection.next_eligible_at == reflection.created_at + timedelta(minutes=30)
    assert (reflection.relation_type, reflection.temporal_scope) == ("trait", "pattern")
    assert set(Fact.objects.filter(absorbed=True).values_list("fact_id", flat=True)) == {
        f.fact_id for f in facts
    }
    prompt = llm_server.bodies[0]["messages"][0]["content"]
    assert "阿凛的生日是三月三日（重要程度：9）" in prompt and "天气不错" not in prompt
    types = list(Event.objects.filter(character=character).values_list("type", flat=True))
    assert "reflection.synthesized" in types and "fact.absorbed" in types


def test_four_facts_are_not_enough_and_no_llm_is_called(character, llm_server):
    facts_for(character, 4)
    assert reflection_synthesize(character_id=character.pk).reflection is None
    assert llm_server.requests == [] and not Reflection.objects.exists()


def test_the_cap_is_twenty_by_importance_then_age(character, llm_server):
    low = facts_for(character, 5, importance=5)
    high = facts_for(character, 18, importance=8, start=100)
    llm_server.script(synthesis_reply())
    reflection = reflection_synthesize(character_id=character.pk).reflection
    assert reflection is not None
    expected = [f.fact_id for f in high] + [f.fact_id for f in low[:2]]
    assert reflection.source_fact_ids == sorted(expected)
    assert Fact.objects.filter(absorbed=False).count() == 3


def test_an_existing_id_only_re_marks_the_facts(character, llm_server):
    facts = facts_for(character, 5)
    Reflection.objects.create(
        character=character,
        reflection_id=reflection_id_for([f.fact_id for f in facts]),
        text="已经写过",
        created_at=timezone.now(),
    )
    result = reflection_synthesize(character_id=character.pk)
    assert result.reason == "already synthesized" and llm_server.requests == []
    assert Fact.objects.filter(absorbed=True).count() == 5 and Reflection.objects.count() == 1


def test_an_invalid_ontology_is_cleared_but_the_text_kept(character, llm_server):
    facts_for(character, 5)
    llm_server.script(synthesis_reply(text="小天学会了泡茶", entity="neko", relation_type="habit"))
    reflection = reflection_synthesize(character_id=character.pk).reflection
    assert reflection is not None and reflection.text == "小天学会了泡茶" and reflection.entity == "neko"
    assert (reflection.relation_type, reflection.temporal_scope, reflection.subject) == (None, None, None)


def test_a_failing_provider_backs_off_dies_after_five_and_is_probed_after_five_hours(character, llm_server):
    facts_for(character, 5)
    llm_server.fallback = lambda _body: error(500)
    llm_server.allow_unexpected = True
    now = timezone.now()

    outcomes = []
    for _ in range(5):
        outcomes.append(reflection_synthesize(character_id=character.pk, now=now).reason)
        # Within the back-off nothing is sent.
        calls = len(llm_server.requests)
        assert reflection_synthesize(character_id=character.pk, now=now).reason in ("backoff", "dead")
        assert len(llm_server.requests) == calls
        now += timedelta(minutes=20)
    assert outcomes == ["failed: backoff"] * 4 + ["failed: dead"]
    job = Job.objects.get(character=character, kind=SYNTHESIS_JOB)
    assert job.status == Job.Status.DEAD and job.attempts == 5 and "500" in job.last_error
    assert job.finished_at is not None

    # Dead stays dead: neither the loop nor the sweep's probe runs it again within 5 hours.
    calls = len(llm_server.requests)
    assert jobs_self_heal_probe(now=job.finished_at + timedelta(hours=4)) == []
    assert reflection_synthesize(character_id=character.pk, now=now + timedelta(hours=4)).reason == "dead"
    assert len(llm_server.requests) == calls

    # The sweep's 5-hourly probe gives the same key one more run, which now succeeds.
    assert jobs_self_heal_probe(now=job.finished_at + timedelta(hours=5, seconds=1)) == [job.pk]
    llm_server.fallback = None
    llm_server.script(synthesis_reply())
    probe = reflection_synthesize(character_id=character.pk, now=now + timedelta(hours=5, seconds=2))
    assert probe.reflection is not None
    job.refresh_from_db()
    assert (job.status, job.outcome) == (Job.Status.DONE, "synthesized")


def test_a_new_fact_resets_the_back_off(character, llm_server):
    facts_for(character, 5)
    llm_server.script(error(500), error(500), error(500))
    now = timezone.now()
    assert reflection_synthesize(character_id=character.pk, now=now).reason == "failed: backoff"
    make_fact(character=character, text="阿凛又说了一件新事", importance=6)
    llm_server.script(synthesis_reply())
    assert reflection_synthesize(character_id=character.pk, now=now).reflection is not None
    # The first input's job is moot now, not a dead letter waiting for a retry.
    outcomes = sorted(
        Job.objects.filter(character=character, kind=SYNTHESIS_JOB).values_list("outcome", flat=True)
    )
    assert outcomes == ["superseded", "synthesized"]


def test_no_provider_waits_without_counting_an_attempt(character, settings):
    facts_for(character, 5)
    settings.LLM_TIERS = {
        tier: {"base_url": "", "api_key": "", "model": ""} for tier in settings.LLM_TIER_NAMES
    }
    assert reflection_synthesize(character_id=character.pk).reason.startswith("waiting")
    job = Job.objects.get(character=character, kind=SYNTHESIS_JOB)
    assert (job.status, job.attempts, job.waiting_reason) == (Job.Status.WAITING, 0, "no_provider:summary")
    # Still no provider: the next tick does not even claim it.
    assert reflection_synthesize(character_id=character.pk).reason == "no_provider:summary"
