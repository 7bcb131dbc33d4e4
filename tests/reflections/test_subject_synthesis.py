"""Reflections synthesised from a group-chat subject's facts (reference §3.5.1 last line, §3.5.4): the same
thresholds and back-off as the master's, per subject; created ``confirmed``; promoted by age alone into the
subject's own persona section, whatever the powerful-memory switch says; never the master's."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from facts.models import Fact
from facts.services import ScopedFact, facts_scoped_store
from groupchat.services import scoped_context_render
from nekomem.journal.models import Job
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_set
from nekomem.subjects import subject_parse
from persona.models import PersonaEntry
from persona.services import persona_promote_tick
from reflections.models import Reflection
from reflections.services import reflection_synthesize, reflections_subjects_synthesize
from reflections.services.records import reflection_id_for
from reflections.services.retries import SUBJECT_SYNTHESIS_JOB
from reflections.tasks import reflection_synthesis_loop
from tests.facts.factories import make_fact
from tests.reflections.test_synthesis import synthesis_reply
from tests.support.llm_server import error

pytestmark = pytest.mark.django_db

ALICE = subject_parse({"subject_kind": "group_participant", "subject_id": "qq:7788:1001"})
BOB = subject_parse({"subject_kind": "group_participant", "subject_id": "qq:7788:1002"})


def subject_facts(
    character, subject, texts: list[str], importance: int = 6, label: str = "Alice"
) -> list[str]:
    stored = facts_scoped_store(
        character_id=character.pk,
        subject=subject,
        facts=[ScopedFact(text=t, importance=importance) for t in texts],
        speaker={"speaker_label": label},
    )
    return stored.fact_ids


ALICE_TEXTS = [f"Alice 周末第{i}次去爬山" for i in range(5)]


def test_a_subjects_facts_become_one_confirmed_reflection_of_that_subject(character, llm_server):
    alice_ids = subject_facts(character, ALICE, ALICE_TEXTS)
    subject_facts(character, BOB, [f"Bob 喜欢第{i}种茶" for i in range(4)], label="Bob")  # one short
    subject_facts(character, BOB, ["Bob 提了一句天气"], importance=3, label="Bob")  # not important
    make_fact(character=character, text="阿凛喜欢安静", importance=8)  # the master's: never mixed in
    llm_server.script(synthesis_reply("Alice 是个热爱户外的人"))

    results = reflections_subjects_synthesize(character_id=character.pk)

    assert list(results) == [ALICE.key] and results[ALICE.key].reason == "synthesized"
    reflection = Reflection.with_subjects.get(character=character)
    assert reflection.subject_key == ALICE.key and reflection.status == Reflection.Status.CONFIRMED
    assert reflection.confirmed_at is not None and reflection.text == "Alice 是个热爱户外的人"
    assert reflection.reflection_id == reflection_id_for(alice_ids)
    assert reflection.extra["subject_kind"] == "group_participant"
    assert reflection.extra["subject_id"] == "qq:7788:1001"
    assert not Reflection.objects.exists()  # the master's reflections see none of it
    absorbed = set(Fact.with_subjects.filter(absorbed=True).values_list("fact_id", flat=True))
    assert absorbed == set(alice_ids)
    prompt = llm_server.bodies[0]["messages"][0]["content"]
    assert "Alice" in prompt and all(t in prompt for t in ALICE_TEXTS)
    assert "阿凛" not in prompt and "Bob" not in prompt
    # the master's own synthesis sees one fact: not enough, nothing asked
    assert reflection_synthesize(character_id=character.pk).reason == "not enough facts"
    assert len(llm_server.requests) == 1
    # a second pass finds nothing more
    assert reflections_subjects_synthesize(character_id=character.pk) == {}


def test_each_subject_backs_off_on_its_own(character, llm_server):
    subject_facts(character, ALICE, ALICE_TEXTS)
    subject_facts(character, BOB, [f"Bob 喜欢第{i}种茶" for i in range(5)], label="Bob")
    # Alice's call fails (three tries of one attempt), Bob's succeeds.
    llm_server.script(error(500), error(500), error(500), synthesis_reply("Bob 是个爱茶的人"))

    results = reflections_subjects_synthesize(character_id=character.pk)

    assert results[ALICE.key].reason == "failed: backoff"
    assert results[BOB.key].reason == "synthesized"
    assert list(Reflection.with_subjects.values_list("subject_key", flat=True)) == [BOB.key]
    jobs = dict(Job.objects.filter(kind=SUBJECT_SYNTHESIS_JOB).values_list("key", "status"))
    assert len(jobs) == 2 and sorted(jobs.values()) == ["done", "waiting"]
    # Inside Alice's back-off nothing is asked; a new fact about Alice is a new key and runs at once.
    assert reflections_subjects_synthesize(character_id=character.pk)[ALICE.key].reason == "backoff"
    asked = len(llm_server.requests)
    subject_facts(character, ALICE, ["Alice 买了新登山鞋"])
    llm_server.script(synthesis_reply("Alice 热爱户外"))
    assert reflections_subjects_synthesize(character_id=character.pk)[ALICE.key].reason == "synthesized"
    assert len(llm_server.requests) == asked + 1
    statuses = Job.objects.filter(kind=SUBJECT_SYNTHESIS_JOB).values_list("outcome", flat=True)
    assert sorted(statuses) == ["superseded", "synthesized", "synthesized"]


@pytest.mark.parametrize("powerful", [True, False])
def test_a_subject_reflection_is_promoted_by_age_into_its_own_section(character, llm_server, powerful):
    switch_set(name=POWERFUL_MEMORY, enabled=powerful)
    subject_facts(character, ALICE, ALICE_TEXTS)
    llm_server.script(synthesis_reply("Alice 是个热爱户外的人"))
    reflections_subjects_synthesize(character_id=character.pk)
    reflection = Reflection.with_subjects.get()
    asked = len(llm_server.requests)

    early = persona_promote_tick(character_id=character.pk, now=timezone.now() + timedelta(days=6))
    assert reflection.reflection_id not in early.outcomes
    later = persona_promote_tick(character_id=character.pk, now=timezone.now() + timedelta(days=7, hours=1))

    assert later.outcomes[reflection.reflection_id] == "promoted"
    assert len(llm_server.requests) == asked  # no merge decision, no LLM
    entry = PersonaEntry.with_subjects.get(character=character)
    assert entry.section == f"@subject/{ALICE.key}" and entry.subject_key == ALICE.key
    assert entry.source == "reflection_time_driven" and entry.text == "Alice 是个热爱户外的人"
    assert not PersonaEntry.objects.filter(character=character).exists()  # never the master's sections
    reflection.refresh_from_db()
    assert reflection.status == Reflection.Status.PROMOTED
    # once, however many ticks follow
    persona_promote_tick(character_id=character.pk, now=timezone.now() + timedelta(days=9))
    assert PersonaEntry.with_subjects.count() == 1


def test_scoped_context_shows_the_subjects_reflection_once_before_and_after_promotion(character, llm_server):
    subject_facts(character, ALICE, ALICE_TEXTS)
    llm_server.script(synthesis_reply("Alice 是个热爱户外的人"))
    reflections_subjects_synthesize(character_id=character.pk)

    before = scoped_context_render(character=character, subjects=[ALICE], language="zh")
    assert before.count("Alice 是个热爱户外的人") == 1
    assert scoped_context_render(character=character, subjects=[BOB], language="zh") == ""

    persona_promote_tick(character_id=character.pk, now=timezone.now() + timedelta(days=8))
    after = scoped_context_render(character=character, subjects=[ALICE], language="zh")
    assert after.count("Alice 是个热爱户外的人") == 1


def test_the_synthesis_loop_runs_the_subjects_too(character, llm_server):
    subject_facts(character, ALICE, ALICE_TEXTS)
    llm_server.script(synthesis_reply("Alice 是个热爱户外的人"))
    reflection_synthesis_loop()
    assert Reflection.with_subjects.filter(subject_key=ALICE.key).count() == 1
