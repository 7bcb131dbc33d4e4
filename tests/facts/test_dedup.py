from __future__ import annotations

import pytest
from django.db import IntegrityError

from facts.models import ExtractionCursor, Fact, FactDedupPair
from facts.services import (
    FactDraft,
    dedup_pair_queue,
    dedup_pairs_arbitrate,
    facts_extraction_tick,
    facts_persist,
)
from facts.services.arbitration import DEDUP_JOB
from facts.services.extraction import EXTRACTION_JOB
from facts.services.records import fact_hash, fact_id_for
from nekomem.characters.models import Character
from nekomem.journal.models import Event, Job
from tests.facts.conftest import T0, minutes, say
from tests.facts.factories import FactFactory, make_fact
from tests.facts.test_extraction import fact_reply
from tests.support.llm_server import error, json_content

pytestmark = pytest.mark.django_db


def persist(character, *texts: str, source: str = "user_observation"):
    return facts_persist(
        character_id=character.pk, drafts=[FactDraft(text=t, source=source) for t in texts], now=T0
    )


def test_exact_hash_is_skipped_including_the_archive(character):
    FactFactory.create(character=character, text="阿凛喜欢猫", archived=True)
    report = persist(character, "阿凛喜欢猫", "阿凛喜欢猫")
    assert report.skipped_exact == 2 and not report.created
    assert Fact.objects.filter(character=character).count() == 1


def test_ai_disclosure_is_upgraded_one_way(character):
    disclosed = FactFactory.create(
        character=character, text="小天怕打雷", source="ai_disclosure", signal_processed=True
    )
    observed = FactFactory.create(character=character, text="阿凛怕黑", source="user_observation")
    before = Character.objects.get(pk=character.pk).memory_version

    report = persist(character, "小天怕打雷")
    persist(character, "阿凛怕黑", source="ai_disclosure")

    disclosed.refresh_from_db()
    observed.refresh_from_db()
    assert report.upgraded == [disclosed.fact_id]
    assert disclosed.source == "user_observation" and disclosed.signal_processed is False
    assert observed.source == "user_observation"  # never downgraded
    assert Character.objects.get(pk=character.pk).memory_version == before + 1


def test_identical_normalised_text_is_dropped_but_similar_text_is_queued(character):
    old = FactFactory.create(character=character, text="Rin loves green tea")
    report = persist(character, "rin  LOVES green tea", "Rin loves green tea with milk")
    assert report.skipped_identical == 1 and len(report.created) == 1
    pair = FactDedupPair.objects.get()
    assert pair.candidate is not None
    assert (
        pair.existing == old
        and pair.candidate.text == "Rin loves green tea with milk"
        and pair.cosine is None
    )


def test_chinese_near_duplicates_are_found_through_han_ngrams(character):
    # One Han run: the original's unicode61 FTS saw a single token and never matched these.
    old = FactFactory.create(character=character, text="阿凛最喜欢吃草莓蛋糕")
    report = persist(character, "阿凛很喜欢吃草莓蛋糕了", "阿凛下周去北京出差")
    assert len(report.created) == 2
    pair = FactDedupPair.objects.get()
    assert pair.candidate is not None
    assert pair.existing == old and pair.candidate.text == "阿凛很喜欢吃草莓蛋糕了"


def test_traditional_chinese_identical_text_is_not_dropped_only_queued(character):
    FactFactory.create(character=character, text="阿凛喜歡貓")
    report = persist(character, "阿凛喜欢猫")
    assert len(report.created) == 1 and report.queued_pairs == 1


def test_archived_identical_text_cannot_sneak_back(character):
    FactFactory.create(character=character, text="Rin lives in Osaka", archived=True, absorbed=True)
    report = persist(character, "rin lives in osaka")
    assert report.skipped_identical == 1 and not report.created


def test_a_failure_mid_persist_rolls_back_everything(character, llm_server):
    disclosed = FactFactory.create(
        character=character, text="小天怕打雷", source="ai_disclosure", signal_processed=True
    )
    now = T0 + minutes(1)
    # A row imported with an id that collides with the second new fact: a real unique violation.
    FactFactory.create(
        character=character,
        text="旧的导入事实",
        fact_id=fact_id_for(created_at=now, hash_=fact_hash("阿凛养了一只狗")),
    )
    version = Character.objects.get(pk=character.pk).memory_version
    events = Event.objects.count()

    with pytest.raises(IntegrityError):
        facts_persist(
            character_id=character.pk,
            drafts=[
                FactDraft(text="阿凛要去旅行"),
                FactDraft(text="小天怕打雷"),
                FactDraft(text="阿凛养了一只狗"),
            ],
            now=now,
        )
    disclosed.refresh_from_db()
    assert not Fact.objects.filter(text="阿凛要去旅行").exists()
    assert disclosed.source == "ai_disclosure"  # the upgrade was undone
    assert (
        Character.objects.get(pk=character.pk).memory_version == version and Event.objects.count() == events
    )

    # Through the extraction loop: the window is kept for a retry, not reported as done.
    say(character, T0, ("human", "我要去旅行，还养了一只狗"))
    llm_server.script(fact_reply("阿凛要去旅行", "阿凛养了一只狗"))
    facts_extraction_tick(character_id=character.pk, now=now)
    state = ExtractionCursor.objects.get(character=character)
    job = Job.objects.get(character=character, kind=EXTRACTION_JOB)
    assert state.last_a_message_at is None and (job.attempts, job.status) == (1, "waiting")
    assert "IntegrityError" in job.last_error
    assert not Fact.objects.filter(text="阿凛要去旅行").exists()


def test_dedup_pair_queue_is_idempotent_in_both_directions(character):
    a, b = make_fact(character=character), make_fact(character=character)
    assert dedup_pair_queue(character_id=character.pk, candidate=a, existing=b, cosine=0.91)
    assert not dedup_pair_queue(character_id=character.pk, candidate=a, existing=b, cosine=0.91)
    assert not dedup_pair_queue(character_id=character.pk, candidate=b, existing=a, cosine=0.91)
    assert FactDedupPair.objects.get().cosine == pytest.approx(0.91)


def _queue(character, pairs: int) -> list[FactDedupPair]:
    for i in range(pairs):
        old = make_fact(character=character, text=f"阿凛喜欢第{i}本书", importance=5)
        new = make_fact(character=character, text=f"阿凛很喜欢第{i}本书", importance=8)
        dedup_pair_queue(character_id=character.pk, candidate=new, existing=old, cosine=None)
    return list(FactDedupPair.objects.order_by("pk"))


def test_arbitration_merges_replaces_and_keeps_in_batches_of_twenty(character, llm_server):
    _queue(character, 22)
    decisions = [
        {"index": 0, "action": "merge", "text": "阿凛非常喜欢第0本书"},
        {"index": 1, "action": "replace"},
    ]
    decisions += [{"index": i, "action": "keep_both"} for i in range(2, 20)]
    llm_server.script(json_content(decisions))

    result = dedup_pairs_arbitrate(character_id=character.pk, now=T0)

    assert result.resolved == 20
    assert "[19]" in llm_server.bodies[0]["messages"][0]["content"]
    assert "[20]" not in llm_server.bodies[0]["messages"][0]["content"]
    merged = Fact.objects.get(text="阿凛非常喜欢第0本书")
    assert merged.importance == 8 and not Fact.objects.filter(text="阿凛很喜欢第0本书").exists()
    assert (
        Fact.objects.filter(text="阿凛很喜欢第1本书").exists()
        and not Fact.objects.filter(text="阿凛喜欢第1本书").exists()
    )
    assert FactDedupPair.objects.filter(status="pending").count() == 2


def test_arbitration_failures_count_and_no_provider_waits(character, llm_server, settings):
    _queue(character, 1)
    llm_server.script(error(500), error(500), error(500))
    assert dedup_pairs_arbitrate(character_id=character.pk, now=T0).reason.startswith("failed")
    job = Job.objects.get(character=character, kind=DEDUP_JOB)
    assert (job.status, job.waiting_reason, job.attempts) == ("waiting", "backoff", 1)
    assert dedup_pairs_arbitrate(character_id=character.pk, now=T0).reason == "waiting: backoff"
    settings.LLM_TIERS = {tier: {} for tier in settings.LLM_TIER_NAMES}
    later = T0 + minutes(5)
    assert (
        dedup_pairs_arbitrate(character_id=character.pk, now=later).reason == "waiting: no_provider:summary"
    )
    job.refresh_from_db()
    assert (job.status, job.waiting_reason, job.attempts) == ("waiting", "no_provider:summary", 1)
    assert FactDedupPair.objects.get().status == "pending"


def test_five_failed_arbitrations_dead_letter_the_batch(character, llm_server):
    _queue(character, 1)
    llm_server.fallback = lambda body: error(500)
    llm_server.allow_unexpected = True
    now = T0
    for _ in range(5):
        assert dedup_pairs_arbitrate(character_id=character.pk, now=now).reason.startswith("failed")
        job = Job.objects.get(character=character, kind=DEDUP_JOB)
        now = job.next_attempt_at or now
    assert (job.status, job.attempts) == ("dead", 5)
    assert FactDedupPair.objects.get().status == "dead"


def test_arbitration_waits_for_idle_and_powerful_memory(character, llm_server):
    from nekomem.runtime.switches import POWERFUL_MEMORY, switch_set

    _queue(character, 1)
    Character.objects.filter(pk=character.pk).update(last_activity_at=T0)
    assert dedup_pairs_arbitrate(character_id=character.pk, now=T0).reason == "not idle"
    switch_set(name=POWERFUL_MEMORY, enabled=False)
    assert "off" in dedup_pairs_arbitrate(character_id=character.pk, now=T0 + minutes(5)).reason
    assert llm_server.requests == []
