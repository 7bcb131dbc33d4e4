"""The near-duplicate layer's token index: same decisions as scoring every fact, kept up to date."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from facts.models import Fact, FactDedupPair, FactToken
from facts.services import FactDraft, fact_update, facts_persist
from facts.services.tokens import DEDUP_INDEX_JOB, dedup_index_refresh, dedup_key_for
from nekomem.characters.models import Character
from nekomem.journal.jobs import job_claim, job_run
from nekomem.journal.models import Job, WorkStatus
from nekomem.language.normalize import normalized_identity
from nekomem.language.tokens import dice_overlap, fts_tokens
from tests.facts.conftest import T0
from tests.facts.factories import make_fact
from tests.recall.support import fact_entry, import_facts
from tests.support.dataset import conversation

pytestmark = pytest.mark.django_db


def persist(character, *texts: str):
    return facts_persist(character_id=character.pk, drafts=[FactDraft(text=t) for t in texts], now=T0)


def full_scan(character: Character, text: str) -> tuple[bool, Fact | None]:
    """§3.3.4 by brute force: (dropped as identical, best fact with overlap ≥ 0.25)."""
    names = Character.objects.get(pk=character.pk).stop_names
    tokens = fts_tokens(text, names)
    scored = [
        (dice_overlap(tokens, fts_tokens(f.text, names)), f)
        for f in Fact.objects.filter(character=character).order_by("created_at", "pk")
    ]
    scored = sorted((s for s in scored if s[0] > 0), key=lambda s: s[0], reverse=True)[:10]
    identical = any(normalized_identity(f.text) == normalized_identity(text) for _, f in scored)
    best = scored[0][1] if scored and scored[0][0] >= 0.25 else None
    return identical, best


def test_index_decisions_equal_a_full_scan_on_real_conversation_text(character):
    user_lines = [t["text"] for t in conversation("memorybank-cn") if t["role"] == "user"][:80]
    # Existing facts made outside facts_persist (unindexed), some archived, some in the future.
    for i, line in enumerate(user_lines[:40]):
        make_fact(character=character, text=line, archived=i % 4 == 0, created_at=T0 - timedelta(days=i % 7))
    drafts = [*user_lines[40:], *(line[: max(4, len(line) // 2)] for line in user_lines[:40:3])]
    drafts += [user_lines[5].upper() + "  ", user_lines[6] + "吧"]
    for text in drafts:
        identical, best = full_scan(character, text)
        pairs_before = set(FactDedupPair.objects.values_list("pk", flat=True))
        report = persist(character, text)
        if report.skipped_exact:
            continue
        assert report.skipped_identical == int(identical), text
        new_pairs = FactDedupPair.objects.exclude(pk__in=pairs_before)
        if best is None or identical:
            assert not new_pairs.exists(), text
        else:
            pair = new_pairs.get()
            assert pair.candidate is not None
            assert (pair.existing_id, pair.candidate.text) == (best.pk, text)
    assert FactDedupPair.objects.count() > 5  # the sample does exercise the queue


def test_unindexed_rows_are_indexed_on_the_next_store(character):
    old = make_fact(character=character, text="阿凛最喜欢吃草莓蛋糕")
    assert old.dedup_key == "" and not FactToken.objects.exists()
    persist(character, "阿凛很喜欢吃草莓蛋糕了")
    old.refresh_from_db()
    assert old.dedup_key == dedup_key_for(character.stop_names)
    assert set(old.dedup_tokens.split()) == set(fts_tokens(old.text, character.stop_names))
    assert FactToken.objects.filter(fact=old).count() == len(old.dedup_tokens.split())
    assert FactDedupPair.objects.get().existing == old


def test_a_rename_reindexes_the_character(character):
    old = make_fact(character=character, text="小凛喜欢猫")
    persist(character, "今天下雨")  # indexes "小凛喜欢猫" with "小凛" as text: 7 tokens
    assert old.dedup_index.count() == 7
    Character.objects.filter(pk=character.pk).update(master_nicknames=["小凛"])
    # Now "喜欢猫" (3 tokens) against "喜欢狗" (3): Dice 2/6 ≥ 0.25; the stale 7 would give 2/10.
    report = persist(character, "喜欢狗")
    old.refresh_from_db()
    assert old.dedup_key == dedup_key_for(["小天", "阿凛", "小凛"]) and old.dedup_index.count() == 3
    assert report.queued_pairs == 1 and FactDedupPair.objects.get().existing == old


def test_an_edited_text_is_matched_by_its_new_tokens(character):
    fact = make_fact(character=character, text="阿凛喜欢绿茶")
    persist(character, "阿凛下周去北京")
    fact_update(character_id=character.pk, fact_id=fact.fact_id, text="阿凛在上海工作了三年")
    fact.refresh_from_db()
    assert fact.dedup_key and "上海" in fact.dedup_tokens.split() and "绿茶" not in fact.dedup_tokens.split()
    report = persist(character, "阿凛在上海工作了三年多")
    assert report.queued_pairs == 1 and FactDedupPair.objects.get().existing == fact
    assert persist(character, "阿凛喜欢绿茶").queued_pairs == 0


def test_very_long_latin_runs_are_indexed_by_digest(character):
    word = "x" * 300
    make_fact(character=character, text=f"{word} alpha")
    report = persist(character, f"{word} beta")
    # Dice 2·1/(2+2) = 0.5: the long shared word matched through its digest.
    assert report.queued_pairs == 1
    assert all(len(t) <= 64 for t in FactToken.objects.values_list("token", flat=True))
    assert FactToken.objects.filter(token__startswith="~").count() == 2


IMPORTED = ["阿凛最喜欢吃草莓蛋糕", "阿凛养了一只叫年糕的猫", "阿凛每天早上跑步五公里", "阿凛在上海工作"]


@pytest.fixture
def imported(tmp_path, monkeypatch, character) -> Character:
    """An import larger than the facts it indexes itself (here 2): its index is left to the job."""
    monkeypatch.setattr("facts.portability.INDEX_NOW_MAX", 2)
    import_facts(
        tmp_path, character.name, [fact_entry(t, T0 - timedelta(days=i + 1)) for i, t in enumerate(IMPORTED)]
    )
    return character


def index_job(character: Character) -> Job:
    return Job.objects.get(character=character, kind=DEDUP_INDEX_JOB)


def test_a_large_import_returns_with_its_index_left_to_a_job_that_fills_it(imported):
    facts = Fact.objects.filter(character=imported)
    assert facts.count() == len(IMPORTED)
    assert not FactToken.objects.exists() and not facts.exclude(dedup_key="").exists()
    job = index_job(imported)
    assert job.status == WorkStatus.PENDING
    assert job_run(job_id=job.pk) == WorkStatus.DONE
    key = dedup_key_for(imported.stop_names)
    for fact in facts:
        assert fact.dedup_key == key
        assert set(fact.dedup_tokens.split()) == set(fts_tokens(fact.text, imported.stop_names))
        assert FactToken.objects.filter(fact=fact).count() == len(fact.dedup_tokens.split())


def test_a_store_before_the_job_ran_finds_the_imported_duplicates(imported):
    assert not FactToken.objects.exists()  # the job has not run
    report = persist(imported, "阿凛养了一只叫年糕的小猫")
    pair = FactDedupPair.objects.get()
    assert report.queued_pairs == 1
    assert pair.existing is not None and pair.existing.text == IMPORTED[1]
    assert persist(imported, IMPORTED[2] + "  ").skipped_identical == 1
    # The store indexed what the job had not reached; the job then finds nothing left, and adds no rows.
    tokens = FactToken.objects.count()
    assert job_run(job_id=index_job(imported).pk) == WorkStatus.DONE
    assert index_job(imported).outcome == "indexed 0"
    assert FactToken.objects.count() == tokens


def test_a_job_killed_mid_index_goes_on_from_the_facts_still_unindexed(imported, monkeypatch):
    monkeypatch.setattr("facts.services.tokens.JOB_BATCH", 1)
    job = index_job(imported)
    # A run that committed one batch and died: its lease runs out, a later run claims the job again.
    claimed = job_claim(job_id=job.pk)
    assert claimed is not None
    with transaction.atomic():
        dedup_index_refresh(character_id=imported.pk, stop_names=imported.stop_names, limit=1)
    Job.objects.filter(pk=job.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert job_run(job_id=job.pk) == WorkStatus.DONE
    assert index_job(imported).outcome == f"indexed {len(IMPORTED) - 1}"
    facts = Fact.objects.filter(character=imported)
    assert not facts.filter(dedup_key="").exists()
    assert FactToken.objects.count() == sum(len(f.dedup_tokens.split()) for f in facts)
