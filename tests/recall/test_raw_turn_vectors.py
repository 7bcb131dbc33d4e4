"""Vectors of the raw-turn pool: the backfill embeds uncovered turns (newest first, after the facts),
recall finds them by meaning as well as by words, and they go once extraction covers their turns."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from django.utils import timezone

from facts.models import ExtractionCursor, FactDedupPair
from nekomem.characters.locks import exclusive_work
from nekomem.characters.models import Character
from nekomem.embeddings import get_embedder
from recall import index_cache
from recall.backfill import embedding_backfill, raw_turn_vector_coverage
from recall.models import PairsCursor, RawTurnVector
from recall.selectors import raw_turns_needing_vectors
from recall.tasks import embedding_backfill_tick
from recent.models import RawMessage
from tests.recall.support import fact_entry, import_facts, require_muse

pytestmark = pytest.mark.django_db
NAME = "小铃"


@pytest.fixture
def turns(post_history) -> Character:
    require_muse()
    answer = post_history(
        "cache",
        NAME,
        ("human", "I adopted a tiny kitten from the shelter last weekend"),
        ("ai", "That is wonderful news, what colour is she?"),
        ("human", "我下个月要去北海道滑雪"),
    )
    assert answer.status_code == 200
    return Character.objects.get(name=NAME)


def recalled(client, query: str) -> list[dict]:
    answer = client.post(
        f"/query_memory/{NAME}?explain=1", data=json.dumps({"query": query}), content_type="application/json"
    )
    assert answer.status_code == 200
    return answer.json()["results"]


def test_backfilled_raw_turns_are_recalled_by_meaning_through_a_delta(client, turns: Character) -> None:
    query = "new pet cat"  # no word in common with the turn
    assert all("kitten" not in r["text"] for r in recalled(client, query))  # BM25 alone cannot find it
    builds = index_cache.counters["full_builds"]

    report = embedding_backfill(character_id=turns.pk)
    assert (report.embedded, report.raw_turns) == (3, 3)
    embedder = get_embedder()
    assert embedder is not None
    stored = RawTurnVector.objects.filter(character=turns)
    assert stored.count() == 3 and {v.embedding_model_id for v in stored} == {embedder.model_id}

    rows = recalled(client, query)
    top = next(r for r in rows if "kitten" in r["text"])
    assert top["tier"] == "raw_turn" and top["explain"]["pool"] == "raw turns"
    assert "cosine" in top["explain"]["paths"]
    assert index_cache.counters["full_builds"] == builds  # the vectors arrived as a delta
    assert embedding_backfill(character_id=turns.pk).embedded == 0  # nothing left to embed


def test_messages_with_nothing_to_embed_are_marked_once(client, post_history, turns: Character) -> None:
    tool_call = json.dumps([{"type": "tool", "data": {"content": '{"ok": true}', "tool_call_id": "t1"}}])
    answer = client.post(
        f"/cache/{NAME}", data=json.dumps({"input_history": tool_call}), content_type="application/json"
    )
    assert answer.status_code == 200
    embedder = get_embedder()
    assert embedder is not None
    report = embedding_backfill(character_id=turns.pk)
    assert (report.raw_turns, report.marked) == (3, 1)
    assert raw_turns_needing_vectors(character_id=turns.pk, model_id=embedder.model_id, limit=10) == []


def test_turns_covered_by_extraction_leave_with_their_vectors(client, turns: Character) -> None:
    embedding_backfill(character_id=turns.pk)
    newest = RawMessage.objects.filter(character=turns).order_by("-timestamp", "-pk").first()
    assert newest is not None
    ExtractionCursor.objects.update_or_create(
        character=turns, defaults={"last_a_message_at": newest.timestamp}
    )
    embedding_backfill_tick()
    assert not RawTurnVector.objects.filter(character=turns).exists()
    assert all(r["tier"] != "raw_turn" for r in recalled(client, "new pet cat"))


def test_a_tick_that_runs_out_of_time_hands_over_to_the_next_one(turns: Character) -> None:
    # The next tick is enqueued at once (the test settings run django-q2 tasks inline).
    embedding_backfill_tick(budget=0.0)
    assert RawTurnVector.objects.filter(character=turns).exclude(embedding="").count() == 3


@pytest.mark.django_db(transaction=True)
def test_one_tick_at_a_time_across_the_cluster(post_history) -> None:
    require_muse()
    post_history("cache", NAME, ("human", "我最喜欢的季节是秋天"))
    held, release = threading.Event(), threading.Event()

    def other_worker() -> None:
        from django.db import connection

        try:
            with exclusive_work("embedding-backfill") as mine:
                assert mine
                held.set()
                release.wait(10)
        finally:
            connection.close()

    worker = threading.Thread(target=other_worker)
    worker.start()
    try:
        assert held.wait(10)
        assert embedding_backfill_tick() == 0  # another tick is running: this one leaves the rows to it
        assert not RawTurnVector.objects.exists()
    finally:
        release.set()
        worker.join()
    assert embedding_backfill_tick() == 1  # the lock is free again once its holder is done


def test_pairs_wait_for_the_vectors_then_run_once(tmp_path: Path) -> None:
    require_muse()
    now = timezone.now()
    import_facts(
        tmp_path,
        "小梨",
        [fact_entry(t, now) for t in ("主人喜欢喝绿茶", "主人喜欢喝绿茶。", "主人在学钢琴")],
    )
    character = Character.objects.get(name="小梨")
    # The tick embeds the facts, then (their vectors all in) compares the new ones: one pair.
    assert embedding_backfill_tick() == 3
    pairs = FactDedupPair.objects.filter(character=character)
    assert pairs.count() == 1
    assert PairsCursor.objects.get(character=character).through_version == character_version(character)
    assert embedding_backfill_tick() == 0 and pairs.count() == 1  # nothing new: no second pass


def character_version(character: Character) -> int:
    return Character.objects.get(pk=character.pk).memory_version


def test_the_status_counts_raw_turns_waiting_for_vectors(turns: Character) -> None:
    embedder = get_embedder()
    assert embedder is not None
    before = raw_turn_vector_coverage(embedder.model_id)
    assert (before.with_vectors, before.without_vectors) == (0, 3)
    embedding_backfill(character_id=turns.pk)
    after = raw_turn_vector_coverage(embedder.model_id)
    assert (after.with_vectors, after.without_vectors) == (3, 0)


@pytest.mark.django_db(transaction=True)
def test_a_tick_gathers_a_chats_new_turns_into_batches(monkeypatch) -> None:
    """Turns arriving one by one during a tick are embedded a batch per pause, not a turn per poll."""
    require_muse()
    from django.db import connection
    from django.test import Client

    monkeypatch.setattr("recall.tasks.ROUND_PAUSE_SECONDS", 0.5)
    Client().post(
        f"/cache/{NAME}",
        data=json.dumps({"input_history": json.dumps([{"type": "human", "data": {"content": "早上好"}}])}),
        content_type="application/json",
    )
    character = Character.objects.get(name=NAME)
    embedding_backfill_tick()  # the first turn in, so the timed tick meets only turns that arrive
    sent = 40
    done, first = threading.Event(), threading.Event()

    def chat() -> None:
        client = Client()
        try:
            for i in range(sent):
                turn = [{"type": "human", "data": {"content": f"今天第{i}次喂猫，它吃了{i}条小鱼干"}}]
                body = json.dumps({"input_history": json.dumps(turn, ensure_ascii=False)})
                answer = client.post(f"/cache/{NAME}", data=body, content_type="application/json")
                assert answer.status_code == 200, answer.content
                first.set()
        finally:
            connection.close()  # this thread's own
            done.set()

    versions_before = Character.objects.get(pk=character.pk).memory_version
    writer = threading.Thread(target=chat)
    writer.start()
    assert first.wait(10)  # a turn is waiting as the tick starts, and more come while it runs
    embedding_backfill_tick(budget=2.0)
    writer.join()
    embedding_backfill_tick()  # whatever came in after the timed tick
    assert done.is_set()
    assert RawTurnVector.objects.filter(character=character).exclude(embedding="").count() == 1 + sent
    batches = Character.objects.get(pk=character.pk).memory_version - versions_before
    assert 1 <= batches <= sent // 3, f"{batches} vector batches for {sent} turns"
