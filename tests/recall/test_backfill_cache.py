"""Embedding backfill (fingerprints, dedup pairs, the schedule) and the per-character index cache."""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from facts.models import Fact, FactDedupPair
from facts.services import ScopedFact, facts_scoped_store
from nekomem.characters.models import Character
from nekomem.characters.services import character_memory_changed
from nekomem.embeddings import get_embedder, text_fingerprint
from nekomem.runtime.schedules import registered_schedules
from nekomem.subjects import subject_parse
from recall.backfill import embedding_backfill, facts_needing_vectors
from recall.selectors import stored_vector
from recall.services import RecallRequest, recall_query
from recall.tasks import embedding_backfill_tick
from tests.recall.support import fact_entry, import_facts, require_muse


@pytest.fixture
def character(tmp_path: Path, db) -> Character:
    require_muse()
    now = timezone.now()
    texts = ["主人喜欢喝绿茶", "主人喜欢喝绿茶。", "主人在学钢琴", "Master adopted a cat named Mochi"]
    import_facts(tmp_path, "小满", [fact_entry(t, now - timedelta(days=i)) for i, t in enumerate(texts)])
    return Character.objects.get(name="小满")


def test_backfill_fills_vectors_and_queues_paraphrase_pairs(character: Character) -> None:
    embedder = get_embedder()
    assert embedder is not None
    report = embedding_backfill(character_id=character.pk)
    assert report.embedded == 4
    for fact in Fact.objects.filter(character=character):
        assert fact.embedding_model_id == embedder.model_id
        assert fact.embedding_text_sha256 == text_fingerprint(fact.text)
    pairs = list(FactDedupPair.objects.filter(character=character))
    assert len(pairs) == 1 and pairs[0].cosine is not None and pairs[0].cosine > 0.85
    assert {pairs[0].candidate_text, pairs[0].existing_text} == {"主人喜欢喝绿茶", "主人喜欢喝绿茶。"}
    assert embedding_backfill(character_id=character.pk).embedded == 0  # nothing stale left


def test_a_rewritten_text_invalidates_its_vector(character: Character) -> None:
    embedder = get_embedder()
    assert embedder is not None
    embedding_backfill(character_id=character.pk)
    fact = Fact.objects.get(character=character, text="主人在学钢琴")
    # Another path rewrites the text without clearing the columns: the fingerprint must still catch it.
    Fact.objects.filter(pk=fact.pk).update(text="主人在学小提琴")
    fact.refresh_from_db()
    assert (
        stored_vector(
            vector=fact.embedding,
            text_sha256=fact.embedding_text_sha256,
            model_id=fact.embedding_model_id,
            text=fact.text,
            space=embedder,
        )
        is None
    )
    assert [
        pk for pk, _ in facts_needing_vectors(character_id=character.pk, embedder=embedder, limit=10)
    ] == [fact.pk]
    assert embedding_backfill(character_id=character.pk, queue_pairs=False).embedded == 1


def test_backfill_schedule_is_registered_and_runs(character: Character) -> None:
    assert "recall.tasks.embedding_backfill_tick" in {s.func for s in registered_schedules()}
    assert embedding_backfill_tick() >= 4


@pytest.mark.django_db(transaction=True)
def test_cache_follows_changes_made_by_another_connection(tmp_path: Path) -> None:
    require_muse()
    import_facts(tmp_path, "小雪", [fact_entry("主人喜欢喝绿茶", timezone.now())])
    first = recall_query(name="小雪", request=RecallRequest(query="乌龙茶"))
    assert all("乌龙" not in r["text"] for r in first["results"])
    character = Character.objects.get(name="小雪")

    def other_worker() -> None:
        # Another process's write: its own connection, its own transaction, then the version bump.
        try:
            fact = Fact(
                character_id=character.pk,
                fact_id="fact_20260101000000_abcdef12",
                text="主人最近爱上了乌龙茶",
                hash="abcdef1234567890",
                created_at=timezone.now(),
            )
            fact.save()
            character_memory_changed(character_id=character.pk)
        finally:
            connection.close()

    worker = threading.Thread(target=other_worker)
    worker.start()
    worker.join()
    second = recall_query(name="小雪", request=RecallRequest(query="乌龙茶"))
    assert any("乌龙" in r["text"] for r in second["results"])
    # An unchanged version is served from the cache (same object, no rebuild).
    from recall import index_cache

    entry = index_cache._cache[character.pk]
    recall_query(name="小雪", request=RecallRequest(query="绿茶"))
    assert index_cache._cache[character.pk] is entry


def test_backfill_in_several_chunks_matches_one_chunk(character: Character) -> None:
    # Chunks are embedded one ahead of the writes; every row still gets its own text's vector.
    embedder = get_embedder()
    assert embedder is not None
    assert embedding_backfill(character_id=character.pk, batch=1, queue_pairs=False).embedded == 4
    for fact in Fact.objects.filter(character=character):
        vector = stored_vector(
            vector=fact.embedding,
            text_sha256=fact.embedding_text_sha256,
            model_id=fact.embedding_model_id,
            text=fact.text,
            space=embedder,
        )
        assert vector is not None
        assert float(vector.astype("float32") @ embedder.embed([fact.text])[0]) > 0.99


def test_an_idle_tick_does_not_load_the_model(character: Character) -> None:
    from nekomem import embeddings

    assert embedding_backfill_tick() == 4  # the vectors, then their paraphrase pairs
    embeddings.reset_for_tests()
    assert embedding_backfill_tick() == 0
    assert embeddings.status()["state"] == "init"  # nothing to embed or compare: the model was never loaded


def test_the_backfill_runs_at_background_priority_and_gives_it_back() -> None:
    import os

    from recall.backfill import BACKFILL_NICE, background_priority

    before = os.getpriority(os.PRIO_PROCESS, 0)
    seen: list[int] = []

    def other_thread() -> None:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    with background_priority():
        assert os.getpriority(os.PRIO_PROCESS, 0) == max(before, BACKFILL_NICE)
        worker = threading.Thread(target=other_thread)  # threads started inside inherit it
        worker.start()
        worker.join()
    assert seen == [max(before, BACKFILL_NICE)]
    assert os.getpriority(os.PRIO_PROCESS, 0) == before


def test_the_model_threads_compute_idle_and_the_writer_does_not() -> None:
    import os
    from concurrent.futures import ThreadPoolExecutor

    from recall.backfill import compute_thread_idle

    def policies() -> tuple[int, int]:
        child: list[int] = []
        started = threading.Thread(target=lambda: child.append(os.sched_getscheduler(0)))
        started.start()
        started.join()
        return os.sched_getscheduler(0), child[0]

    with ThreadPoolExecutor(1, initializer=compute_thread_idle) as pool:
        assert pool.submit(policies).result() == (os.SCHED_IDLE, os.SCHED_IDLE)  # and the threads it starts
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # the caller (who writes) is left as it was


def test_group_chat_subjects_facts_get_vectors_too(character: Character) -> None:
    embedder = get_embedder()
    assert embedder is not None
    bob = subject_parse({"subject_kind": "participant", "subject_id": "qq:1002"})
    facts_scoped_store(character_id=character.pk, subject=bob, facts=[ScopedFact(text="Bob 养了一只柯基")])
    embedding_backfill(character_id=character.pk)
    fact = Fact.with_subjects.get(subject_key=bob.key)
    assert fact.embedding_model_id == embedder.model_id
    assert fact.embedding_text_sha256 == text_fingerprint(fact.text)
