from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connections
from django.utils import timezone

from nekomem.characters.models import Character
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_set
from persona.models import PersonaCorrection, PersonaEntry
from persona.services import (
    persona_corrections_resolve,
    persona_ensure,
    persona_promote_tick,
    reflection_promote,
)
from persona.services.promotion import PROMOTE_BACKOFF
from reflections.models import Reflection
from reflections.services import reflection_deny
from tests.persona.factories import make_entry
from tests.reflections.factories import make_reflection
from tests.support.llm_server import error, json_content

pytestmark = pytest.mark.django_db


def _ready(character: Character, text: str, *, r: float = 3.0, entity: str = "master") -> Reflection:
    now = timezone.now()
    return make_reflection(
        character=character,
        text=text,
        entity=entity,
        status=Reflection.Status.CONFIRMED,
        confirmed_at=now - timedelta(days=1),
        reinforcement=r,
        rein_last_signal_at=now,
        disputation=0.5,
        disp_last_signal_at=now,
    )


def test_promote_fresh_adds_a_prom_entry_and_marks_the_reflection_promoted(character, llm_server):
    reflection = _ready(character, "主人最近迷上了做手冲咖啡")
    llm_server.script(json_content({"action": "promote_fresh", "reason": "新信息"}))
    report = persona_promote_tick(character_id=character.pk)
    assert report.outcomes == {reflection.reflection_id: "promoted"}
    entry = PersonaEntry.objects.get(character=character, entry_id=f"prom_{reflection.reflection_id}")
    assert (entry.text, entry.source, entry.reinforcement, entry.disputation) == (
        "主人最近迷上了做手冲咖啡",
        "reflection",
        3.0,
        0.5,
    )
    reflection.refresh_from_db()
    assert reflection.status == Reflection.Status.PROMOTED
    request = llm_server.requests[0].json
    assert request["model"] == "test-correction-model"
    assert "主人最近迷上了做手冲咖啡" in request["messages"][0]["content"]


def test_merge_into_takes_the_larger_evidence_and_resets_the_clocks(character, llm_server):
    character.language = "en"
    character.save()
    old = timezone.now() - timedelta(days=40)
    target = make_entry(
        character=character,
        text="Master likes jazz",
        reinforcement=1.0,
        rein_last_signal_at=old,
        disputation=2.0,
        disp_last_signal_at=old,
        sub_zero_days=6,
    )
    reflection = _ready(character, "Master listens to jazz every night", r=2.8)
    llm_server.script(
        json_content(
            {
                "action": "merge_into",
                "target_id": f"persona.master.{target.entry_id}",
                "merged_text": "Master loves jazz and plays it every night",
            }
        )
    )
    assert persona_promote_tick(character_id=character.pk).outcomes[reflection.reflection_id] == "merged"
    target.refresh_from_db()
    assert target.text == "Master loves jazz and plays it every night"
    assert (target.reinforcement, target.disputation, target.sub_zero_days) == (2.8, 2.0, 0)
    assert target.rein_last_signal_at is not None and target.rein_last_signal_at > old
    assert target.disp_last_signal_at is not None and target.disp_last_signal_at > old
    assert target.merged_from_ids == [reflection.reflection_id]
    assert target.version_history[-1]["text"] == "Master likes jazz"
    reflection.refresh_from_db()
    assert (reflection.status, reflection.absorbed_into) == ("merged", f"persona.master.{target.entry_id}")
    assert "Existing entries" in llm_server.requests[0].json["messages"][0]["content"]
    assert f"[persona.master.{target.entry_id}]" in llm_server.requests[0].json["messages"][0]["content"]


def test_reject_denies_with_the_models_reason(character, llm_server):
    reflection = _ready(character, "主人讨厌所有蔬菜")
    llm_server.script(json_content({"action": "reject", "reason": "证据不足"}))
    persona_promote_tick(character_id=character.pk)
    reflection.refresh_from_db()
    assert (reflection.status, reflection.denied_reason, reflection.reject_reason) == (
        "denied",
        "llm_merge_rejected",
        "证据不足",
    )
    assert not PersonaEntry.objects.filter(character=character, protected=False).exists()


def test_a_failing_provider_backs_off_then_blocks_and_never_promotes_fresh(character, llm_server):
    reflection = _ready(character, "主人周末常去爬山")
    llm_server.script(*[error(500)] * 5)
    start = timezone.now()
    outcomes = []
    for attempt in range(6):
        now = start + attempt * (PROMOTE_BACKOFF + timedelta(seconds=1))
        outcomes.append(reflection_promote(character_id=character.pk, reflection_pk=reflection.pk, now=now))
        if attempt == 0:  # inside the back-off window nothing is tried
            assert (
                reflection_promote(
                    character_id=character.pk, reflection_pk=reflection.pk, now=now + timedelta(minutes=5)
                )
                == "skipped"
            )
    assert outcomes == ["skip_retry_pending"] * 5 + ["skipped"]
    reflection.refresh_from_db()
    assert (reflection.status, reflection.promote_blocked_reason) == ("promote_blocked", "llm_unavailable")
    assert not PersonaEntry.objects.filter(character=character, protected=False).exists()
    assert len(llm_server.requests) == 5


def test_an_unknown_action_is_not_a_promotion(character, llm_server):
    reflection = _ready(character, "主人喜欢下雨天")
    llm_server.script(json_content({"action": "promote_maybe"}))
    assert reflection_promote(character_id=character.pk, reflection_pk=reflection.pk) == "skip_retry_pending"
    reflection.refresh_from_db()
    assert reflection.status == Reflection.Status.CONFIRMED


def test_a_card_conflict_denies_and_an_entry_conflict_queues(character, llm_server):
    persona_ensure(character_id=character.pk)
    make_entry(character=character, text="主人每天早上喝冰美式咖啡")
    card_clash = _ready(character, "主人的职业是大学生吗", entity="master")
    entry_clash = _ready(character, "主人每天早上喝热美式咖啡")
    llm_server.script(*[json_content({"action": "promote_fresh"})] * 2)
    outcomes = persona_promote_tick(character_id=character.pk).outcomes
    assert outcomes == {
        card_clash.reflection_id: "denied_card",
        entry_clash.reflection_id: "queued_correction",
    }
    card_clash.refresh_from_db()
    entry_clash.refresh_from_db()
    assert card_clash.status == "denied" and entry_clash.status == "confirmed"


@pytest.mark.django_db(transaction=True)
def test_a_late_result_does_not_overwrite_a_denial(character, llm_server):
    reflection = _ready(character, "主人打算明年去冰岛旅行")

    def deny_meanwhile(_request):
        # The user denies the reflection while the model is still thinking.
        reflection_deny(character_id=character.pk, reflection_id=reflection.reflection_id)
        connections.close_all()
        return json_content({"action": "promote_fresh"})

    llm_server.script(deny_meanwhile)
    assert reflection_promote(character_id=character.pk, reflection_pk=reflection.pk) == "stale"
    reflection.refresh_from_db()
    assert reflection.status == Reflection.Status.DENIED
    assert not PersonaEntry.objects.filter(character=character, entry_id__startswith="prom_").exists()


def test_off_promotes_by_age_without_the_llm(character, llm_server):
    switch_set(name=POWERFUL_MEMORY, enabled=False)
    now = timezone.now()
    old = make_reflection(
        character=character, text="主人喜欢猫", status="confirmed", confirmed_at=now - timedelta(days=8)
    )
    young = make_reflection(
        character=character, text="主人在学日语", status="confirmed", confirmed_at=now - timedelta(days=2)
    )
    waiting = make_reflection(character=character, text="主人常熬夜", created_at=now - timedelta(days=8))
    report = persona_promote_tick(character_id=character.pk, now=now)
    assert report.outcomes == {old.reflection_id: "promoted"}
    entry = PersonaEntry.objects.get(character=character, source="reflection_time_driven")
    assert entry.entry_id.startswith("manual_") and entry.text == "主人喜欢猫"
    young.refresh_from_db()
    waiting.refresh_from_db()
    assert young.status == "confirmed" and waiting.status == "confirmed" and waiting.auto_confirmed
    assert llm_server.requests == []


def test_with_no_provider_the_promotion_job_waits_and_no_attempt_is_spent(character, settings, llm_server):
    from nekomem.journal.models import Job
    from persona.services.promotion import PROMOTE_JOB

    reflection = _ready(character, "主人最近迷上了做手冲咖啡")
    configured = settings.LLM_TIERS
    settings.LLM_TIERS = {
        tier: {"base_url": "", "api_key": "", "model": ""} for tier in settings.LLM_TIER_NAMES
    }
    for _ in range(7):  # more ticks than the attempts that would block it
        report = persona_promote_tick(character_id=character.pk)
        assert report.outcomes == {reflection.reflection_id: "waiting: no_provider:correction"}
    reflection.refresh_from_db()
    assert (reflection.status, reflection.promote_attempt_count) == (Reflection.Status.CONFIRMED, 0)
    job = Job.objects.get(character=character, kind=PROMOTE_JOB)
    assert (job.key, job.status, job.waiting_reason, job.attempts) == (
        reflection.reflection_id,
        "waiting",
        "no_provider:correction",
        0,
    )

    settings.LLM_TIERS = configured  # a provider is configured: the next tick decides
    llm_server.script(json_content({"action": "promote_fresh", "reason": "新信息"}))
    assert persona_promote_tick(character_id=character.pk).outcomes == {reflection.reflection_id: "promoted"}
    job.refresh_from_db()
    assert (job.status, job.outcome) == ("done", "promoted")


def test_a_blocked_promotion_is_a_dead_job_with_its_errors(character, llm_server):
    from nekomem.journal.models import Job
    from persona.services.promotion import PROMOTE_JOB

    reflection = _ready(character, "主人喜欢猫")
    llm_server.script(*[error(500)] * 5)
    start = timezone.now()
    for attempt in range(5):
        reflection_promote(
            character_id=character.pk,
            reflection_pk=reflection.pk,
            now=start + attempt * (PROMOTE_BACKOFF + timedelta(seconds=1)),
        )
    job = Job.objects.get(character=character, kind=PROMOTE_JOB, key=reflection.reflection_id)
    assert (job.status, job.attempts) == ("dead", 5) and "500" in job.last_error
    reflection.refresh_from_db()
    assert reflection.status == "promote_blocked" and reflection.promote_attempt_count == 5


def test_a_reflection_whose_text_a_correction_kept_is_promoted_once_not_queued_again(character, llm_server):
    persona_ensure(character_id=character.pk)
    make_entry(character=character, text="主人每天早上喝冰美式咖啡")
    reflection = _ready(character, "主人每天早上喝热美式咖啡")
    llm_server.script(json_content({"action": "promote_fresh"}))
    assert persona_promote_tick(character_id=character.pk).outcomes == {
        reflection.reflection_id: "queued_correction"
    }
    # The correction keeps both texts: the reflection's text is now an entry of the section.
    llm_server.script(json_content([{"index": 0, "action": "keep_both", "text": "主人每天早上喝热美式咖啡"}]))
    persona_corrections_resolve(character_id=character.pk)
    assert PersonaEntry.objects.filter(character=character, text="主人每天早上喝热美式咖啡").count() == 1

    # Every later tick finds the text held: promoted once, nothing queued, no second copy.
    for _ in range(3):
        llm_server.script(json_content({"action": "promote_fresh"}))
        persona_promote_tick(character_id=character.pk)
    reflection.refresh_from_db()
    assert reflection.status == Reflection.Status.PROMOTED
    assert PersonaEntry.objects.filter(character=character, text="主人每天早上喝热美式咖啡").count() == 1
    assert not PersonaCorrection.objects.filter(character=character, dropped_at__isnull=True).exists()
