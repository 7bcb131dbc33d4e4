"""Persona refine (reference §3.8): clusters of near-identical entries per section, one call on the
correction tier per cluster, merge / split / modify / discard; card entries never touched; the kernel
job mechanism for back-off, dead letters and the no-provider wait. Loopback LLM, stored vectors."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from nekomem.journal.models import Event, Job, WorkStatus
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_set
from persona.models import PersonaEntry
from persona.services import persona_ensure, persona_refine
from persona.services.refine import REFINE_JOB, SCOPED_REFINE_JOB
from tests.persona.factories import make_entry
from tests.support.llm_server import error, json_content
from tests.support.vectors import axis, store_vector

pytestmark = pytest.mark.django_db


def entry(character, text: str, vector, **fields) -> PersonaEntry:
    return store_vector(make_entry(character=character, text=text, **fields), vector)


def prompt(llm_server, n: int = 0) -> str:
    return llm_server.requests[n].json["messages"][0]["content"]


def live_texts(character) -> set[str]:
    return set(
        PersonaEntry.with_subjects.filter(character=character, archive_shard_path__isnull=True).values_list(
            "text", flat=True
        )
    )


def test_merge_keeps_the_first_id_the_larger_evidence_and_lists_the_others(character, llm_server):
    now = timezone.now()
    first = entry(character, "主人喜欢喝冰美式", axis(0), reinforcement=1.0, disputation=0.2, sub_zero_days=3)
    second = entry(character, "主人爱喝冰美式咖啡", axis(0, 0.05), reinforcement=2.5, disputation=0.5)
    entry(character, "主人住在海边的小城", axis(1))
    llm_server.script(json_content([{"action": "merge", "ids": [0, 1], "text": "主人爱喝冰美式咖啡"}]))
    report = persona_refine(character_id=character.pk, now=now)
    assert (report.clusters, report.actions) == (1, 1)
    body = llm_server.requests[0].json
    assert body["model"] == "test-correction-model"
    assert "[0] 主人喜欢喝冰美式 (evidence=" in prompt(llm_server) and "海边" not in prompt(llm_server)
    first.refresh_from_db()
    assert first.text == "主人爱喝冰美式咖啡"
    assert (first.reinforcement, first.disputation, first.sub_zero_days) == (2.5, 0.5, 0)
    assert first.merged_from_ids == [second.entry_id]
    assert first.version_history[-1]["text"] == "主人喜欢喝冰美式"
    assert first.last_refine_at == now and first.last_refine_cluster_hash
    assert not PersonaEntry.objects.filter(pk=second.pk).exists()
    # Logged like every persona write: the merge, the evidence, the removal.
    kinds = list(Event.objects.filter(character=character).values_list("type", flat=True))
    assert kinds.count("persona.entry_updated") >= 2 and "persona.evidence_updated" in kinds
    assert Job.objects.get(kind=REFINE_JOB).status == WorkStatus.DONE


def test_split_modify_and_discard(character, llm_server):
    mixed = entry(character, "主人喜欢猫，也在学日语", axis(0), reinforcement=1.5)
    clumsy = entry(character, "主人喜欢猫猫的那种喜欢", axis(0, 0.05))
    covered = entry(character, "主人喜欢猫", axis(0, 0.1))
    llm_server.script(
        json_content(
            [
                {"action": "split", "id": 0, "texts": ["主人喜欢猫", "主人在学日语"]},
                {"action": "modify", "id": 1, "text": "主人非常喜欢猫"},
                {"action": "discard", "id": 2},
            ]
        )
    )
    assert persona_refine(character_id=character.pk).actions == 3
    mixed.refresh_from_db()
    clumsy.refresh_from_db()
    covered.refresh_from_db()
    assert mixed.text == "主人喜欢猫" and mixed.version_history[-1]["text"] == "主人喜欢猫，也在学日语"
    part = PersonaEntry.objects.get(text="主人在学日语")
    assert part.section == "master" and part.reinforcement == 1.5 and part.source == "refine"
    assert clumsy.entry_id and clumsy.text == "主人非常喜欢猫"
    assert clumsy.version_history[-1]["text"] == "主人喜欢猫猫的那种喜欢"
    # Discarded into the archive, where a person can restore it.
    assert covered.archive_shard_path and covered.archived_at is not None
    assert live_texts(character) == {"主人喜欢猫", "主人在学日语", "主人非常喜欢猫"}


def test_card_entries_are_never_clustered_sent_or_changed(character, llm_server):
    persona_ensure(character_id=character.pk)
    card = PersonaEntry.objects.get(character=character, protected=True, text="职业: 大学生")
    store_vector(card, axis(0))
    entry(character, "主人是大学生", axis(0, 0.05))
    entry(character, "主人在读大学", axis(0, 0.1))
    llm_server.script(json_content([{"action": "discard", "id": 0}, {"action": "discard", "id": 1}]))
    persona_refine(character_id=character.pk)
    assert "职业: 大学生" not in prompt(llm_server)
    card.refresh_from_db()
    assert card.text == "职业: 大学生" and card.archive_shard_path is None and card.last_refine_at is None


def test_a_cluster_is_asked_again_only_after_30_days(character, llm_server):
    now = timezone.now()
    entry(character, "主人喜欢下雨天", axis(0))
    entry(character, "主人很喜欢下雨", axis(0, 0.05))
    llm_server.script(json_content([]), json_content([]))
    assert persona_refine(character_id=character.pk, now=now).clusters == 1
    assert persona_refine(character_id=character.pk, now=now + timedelta(days=29)).reason == "no clusters"
    assert len(llm_server.requests) == 1
    assert persona_refine(character_id=character.pk, now=now + timedelta(days=31)).clusters == 1
    assert len(llm_server.requests) == 2


def test_three_clusters_a_pass_at_most_six_members_each(character, llm_server):
    for k in range(4):
        for n in range(2):
            entry(character, f"主人的第{k}类爱好之{n}", axis(k, 0.05 * n))
    for n in range(8):
        entry(character, f"主人常去第{n}家书店", axis(9, 0.02 * n), section="neko")
    llm_server.fallback = lambda body: json_content([])
    report = persona_refine(character_id=character.pk)
    assert report.clusters == 3 and len(llm_server.requests) == 3
    sizes = [prompt(llm_server, n).count("(evidence=") for n in range(3)]
    assert max(sizes) <= 6
    # The next pass takes the clusters not asked yet.
    assert persona_refine(character_id=character.pk).clusters >= 1


def test_no_provider_waits_then_runs_once_one_is_configured(character, settings, llm_server):
    configured = settings.LLM_TIERS
    settings.LLM_TIERS = {tier: {} for tier in settings.LLM_TIER_NAMES}
    entry(character, "主人养了一只橘猫", axis(0))
    entry(character, "主人家里有只橘猫", axis(0, 0.05))
    now = timezone.now()
    for _ in range(3):
        report = persona_refine(character_id=character.pk, now=now)
    job = Job.objects.get(kind=REFINE_JOB)
    assert report.reason == "waiting: no_provider:correction"
    assert (job.status, job.waiting_reason, job.attempts) == ("waiting", "no_provider:correction", 0)
    settings.LLM_TIERS = configured
    llm_server.script(json_content([{"action": "merge", "ids": [0, 1], "text": "主人养了一只橘猫"}]))
    assert persona_refine(character_id=character.pk, now=now).actions == 1
    job.refresh_from_db()
    assert job.status == "done" and live_texts(character) == {"主人养了一只橘猫"}


def test_five_failures_dead_letter_the_cluster(character, llm_server):
    entry(character, "主人喜欢爬山", axis(0))
    entry(character, "主人爱爬山", axis(0, 0.05))
    llm_server.script(error(500), json_content([{"action": "discard", "id": 7}]), *[error(500)] * 3)
    now = timezone.now()
    assert persona_refine(character_id=character.pk, now=now).failed == 1
    calls = len(llm_server.requests)
    assert persona_refine(character_id=character.pk, now=now).skipped == 1  # backing off
    assert len(llm_server.requests) == calls
    for n in range(1, 5):
        persona_refine(character_id=character.pk, now=now + timedelta(hours=n))
    job = Job.objects.get(kind=REFINE_JOB)
    assert (job.status, job.attempts) == (WorkStatus.DEAD, 5)
    calls = len(llm_server.requests)
    persona_refine(character_id=character.pk, now=now + timedelta(hours=6))
    assert len(llm_server.requests) == calls and live_texts(character) == {"主人喜欢爬山", "主人爱爬山"}


def test_without_vectors_the_pass_waits_and_says_why(character, llm_server):
    make_entry(character=character, text="主人喜欢晴天")
    make_entry(character=character, text="主人很喜欢晴天")
    report = persona_refine(character_id=character.pk)
    assert report.reason == "waiting: no_vectors:not_embedded_yet"
    job = Job.objects.get(kind=REFINE_JOB)
    assert (job.status, job.waiting_reason) == ("waiting", "no_vectors:not_embedded_yet")
    assert not llm_server.requests


def test_powerful_memory_off_pauses_refine(character, llm_server):
    entry(character, "主人喜欢晴天", axis(0))
    entry(character, "主人很喜欢晴天", axis(0, 0.05))
    switch_set(name=POWERFUL_MEMORY, enabled=False)
    assert persona_refine(character_id=character.pk).reason == "powerful memory off"
    assert not llm_server.requests and not Job.objects.exists()


def test_scoped_sections_never_mix_with_private_ones_or_each_other(character, llm_server):
    entry(character, "主人喜欢打羽毛球", axis(0))
    entry(character, "主人爱打羽毛球", axis(0, 0.05))
    entry(character, "小明喜欢打羽毛球", axis(0, 0.1), section="@subject/qq:1")
    entry(character, "小明爱打羽毛球", axis(0, 0.15), section="@subject/qq:1")
    entry(character, "小红喜欢打羽毛球", axis(0, 0.2), section="@subject/qq:2")
    llm_server.fallback = lambda body: json_content([])
    private = persona_refine(character_id=character.pk)
    assert private.clusters == 1
    assert "小明" not in prompt(llm_server, 0) and "小红" not in prompt(llm_server, 0)
    scoped = persona_refine(character_id=character.pk, scoped=True)
    assert scoped.clusters == 1  # 小红 alone in her section: no cluster
    second = llm_server.requests[1].json
    assert second["model"] == "test-summary-model"
    assert "小明喜欢" in prompt(llm_server, 1) and "主人" not in prompt(llm_server, 1)
    assert "小红" not in prompt(llm_server, 1)
    assert Job.objects.filter(kind=SCOPED_REFINE_JOB).count() == 1


def test_the_command_runs_a_pass_for_one_character(character, llm_server, capsys):
    entry(character, "主人喜欢吃辣", axis(0))
    entry(character, "主人很能吃辣", axis(0, 0.05))
    llm_server.script(json_content([{"action": "merge", "ids": [0, 1], "text": "主人很能吃辣"}]))
    call_command("refine", character=character.name, only=["persona"])
    out = capsys.readouterr().out
    assert "小天: persona refine: 1 clusters, 1 actions" in out
    assert live_texts(character) == {"主人很能吃辣"}


def test_a_cluster_that_changed_leaves_its_old_job_superseded(character, llm_server):
    entry(character, "主人喜欢骑车", axis(0))
    gone = entry(character, "主人爱骑自行车", axis(0, 0.05))
    llm_server.script(error(500))
    now = timezone.now()
    assert persona_refine(character_id=character.pk, now=now).failed == 1
    old = Job.objects.get(kind=REFINE_JOB)
    assert old.status == "waiting" and old.waiting_reason == "backoff"
    gone.delete()
    entry(character, "主人周末骑车", axis(0, 0.08))
    llm_server.script(json_content([]))
    assert persona_refine(character_id=character.pk, now=now).clusters == 1
    old.refresh_from_db()
    assert (old.status, old.outcome) == ("done", "superseded")


def test_a_dead_cluster_gets_one_probe_every_5_hours(character, llm_server):
    from nekomem.journal.sweep import work_sweep

    entry(character, "主人喜欢看海", axis(0))
    entry(character, "主人很爱看海", axis(0, 0.05))
    llm_server.script(*[error(500)] * 5)
    now = timezone.now()
    for n in range(5):
        persona_refine(character_id=character.pk, now=now + timedelta(hours=n))
    job = Job.objects.get(kind=REFINE_JOB)
    assert job.status == WorkStatus.DEAD
    # Dead at now + 4 h (the fifth failure): no probe before now + 9 h.
    assert work_sweep(now=now + timedelta(hours=8)).probed == 0
    assert work_sweep(now=now + timedelta(hours=10)).probed == 1
    llm_server.script(json_content([{"action": "merge", "ids": [0, 1], "text": "主人很爱看海"}]))
    assert persona_refine(character_id=character.pk, now=now + timedelta(hours=10)).actions == 1
    job.refresh_from_db()
    assert job.status == "done" and live_texts(character) == {"主人很爱看海"}
