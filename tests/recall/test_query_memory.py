"""POST /query_memory over an imported real conversation (memorybank-cn), with the real MUSE model."""

from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from nekomem import embeddings
from nekomem.characters.models import Character
from nekomem.language.counting import count_tokens
from recall import index_cache
from recall.backfill import embedding_backfill
from recall.rendering import BLOCK_TOKENS, ENTRY_TOKENS, render_recall_markdown
from recall.times import parse_time_window
from tests.recall.support import fact_entry, import_facts, require_muse
from tests.support.dataset import conversation

pytestmark = pytest.mark.django_db

NAME = "小天"
CONV = "memorybank_zh_u00"
# In the source data 2023-04-29/30 is a weekend; every turn is moved by whole weeks so it is *last* weekend.
SOURCE_SATURDAY = date(2023, 4, 29)


def _shift_days() -> int:
    window = parse_time_window("上周末", now=timezone.now(), tz=settings.TIME_ZONE)
    assert window is not None
    return (timezone.localtime(window.start).date() - SOURCE_SATURDAY).days


@pytest.fixture
def imported(tmp_path: Path) -> dict[str, str]:
    """The conversation imported as facts of 小天 (one per turn); returns {fact id: turn id}."""
    require_muse()
    shift = timedelta(days=_shift_days())
    facts, ids = [], {}
    for turn in conversation("memorybank-cn", CONV):
        when = timezone.make_aware(datetime.fromisoformat(turn["timestamp"]) + shift + timedelta(hours=12))
        entry = fact_entry(f"{turn['speaker']}: {turn['text']}", when, key=turn["turn_id"])
        ids[entry["id"]] = turn["turn_id"]
        facts.append(entry)
    import_facts(tmp_path, NAME, facts)
    report = embedding_backfill(character_id=Character.objects.get(name=NAME).pk)
    assert report.embedded == len(facts)
    return ids


def ask(client, body: dict, *, name: str = NAME, params: str = ""):
    return client.post(
        f"/query_memory/{name}{params}",
        data=json.dumps(body, ensure_ascii=False),
        content_type="application/json",
    )


def test_last_weekend_query_returns_that_weekend_memory(client, imported) -> None:
    response = ask(client, {"query": "我推荐过的科幻电影叫什么", "time": "上周末"})
    assert response.status_code == 200
    body = response.json()
    turn_ids = [imported[r["id"]] for r in body["results"]]
    assert "S4:7" in turn_ids  # 《流浪地球》, said on the Sunday
    window = parse_time_window("上周末", now=timezone.now(), tz=settings.TIME_ZONE)
    assert window is not None
    for row in body["results"]:
        assert window.contains(datetime.fromisoformat(row["event_start_at"]))
    assert body["time"] == "上周末" and 0 < len(body["results"]) <= 8


def test_response_shape_tiers_and_explain(client, imported) -> None:
    body = ask(client, {"query": "绿禾公园看到了什么"}, params="?explain=true").json()
    assert {"results", "query", "candidates_total", "elapsed_ms"} <= set(body)
    assert body["candidates_total"] == len(imported)
    row = body["results"][0]
    assert set(row) >= {
        "id",
        "text",
        "tier",
        "entity",
        "subject_kind",
        "subject_id",
        "scope",
        "score",
        "created_at",
        "event_start_at",
        "event_end_at",
        "explain",
    }
    assert "S2:3" in [imported[r["id"]] for r in body["results"][:3]]
    assert {r["tier"] for r in body["results"]} <= {"fact", "fact_archive"}  # persona never
    # Unscoped (pre-group-chat) rows name their scope as the original does, never null.
    assert {r["scope"] for r in body["results"]} == {"legacy_private"}
    paths = row["explain"]["paths"]
    assert {"bm25:words", "cosine"} <= set(paths)
    assert all(p["rank"] >= 1 for p in paths.values())
    assert row["explain"]["fused"] == row["score"]


def test_time_only_is_nearest_in_time(client, imported) -> None:
    body = ask(client, {"time": "上周末"}).json()
    assert len(body["results"]) == 8
    assert all(r["score"] is None for r in body["results"])
    days = {r["event_start_at"][:10] for r in body["results"]}
    saturday = (SOURCE_SATURDAY + timedelta(days=_shift_days())).isoformat()
    assert days <= {saturday, (date.fromisoformat(saturday) + timedelta(days=1)).isoformat()}


def test_unparsable_time_falls_back_to_semantic(client, imported) -> None:
    body = ask(client, {"query": "我推荐过的科幻电影", "time": "很久很久以前的某个下午"}).json()
    assert "S4:7" in [imported[r["id"]] for r in body["results"]]


def test_empty_query_is_empty(client, imported) -> None:
    body = ask(client, {"query": "   "}).json()
    assert body["results"] == [] and "error_code" not in body


def test_request_validation(client) -> None:
    assert ask(client, {"query": "x", "subjects": []}).status_code == 422
    assert ask(client, {"query": 3}).status_code == 422
    assert ask(client, {"query": "x"}, name="bad/..name").status_code in (400, 404)
    assert ask(client, {"query": "x"}, name="..").status_code == 400
    unknown = ask(client, {"query": "x"}, name="nobody")
    assert unknown.status_code == 200 and unknown.json()["results"] == []


def test_internal_failure_is_empty_with_error_code(client, imported, monkeypatch) -> None:
    def broken(**_: object) -> list:
        raise RuntimeError("storage unreadable")

    # Simulates a storage failure below recall (the pools cannot be read).
    monkeypatch.setattr(index_cache.saved, "recall_pools", broken)
    # The import built and saved the index: a process without either must read the pools.
    index_cache.clear()
    with override_settings(RECALL_SNAPSHOT_DIR=""):
        response = ask(client, {"query": "科幻电影"})
    assert response.status_code == 200
    assert response.json() == {
        "results": [],
        "query": "科幻电影",
        "candidates_total": 0,
        "elapsed_ms": 0,
        "error_code": "hybrid_recall_failed",
    }


def test_vectors_off_degrades_to_bm25(client, imported) -> None:
    with override_settings(EMBEDDINGS_ENABLED=False):
        body = ask(client, {"query": "绿禾公园"}, params="?explain=1").json()
    assert body["results"] and "error_code" not in body
    assert all("cosine" not in r["explain"]["paths"] for r in body["results"])


def test_a_query_while_the_model_loads_ranks_by_bm25_over_the_same_index(client, imported, settings) -> None:
    embeddings.reset_for_tests()  # a worker that has just started: the model is not loaded yet
    settings.RECALL_MODEL_WAIT_SECONDS = 0
    settings.RECALL_SNAPSHOT_DIR = ""  # and no saved index (the import saved one): it builds
    index_cache.clear()
    builds = index_cache.counters["full_builds"]
    body = ask(client, {"query": "绿禾公园"}, params="?explain=1").json()
    assert body["vectors"] == "loading" and body["results"] and "error_code" not in body
    assert all("cosine" not in r["explain"]["paths"] for r in body["results"])

    assert embeddings.embedder_within(60) is not None
    again = ask(client, {"query": "绿禾公园"}, params="?explain=1").json()
    assert again["vectors"] == "on"
    assert any("cosine" in r["explain"]["paths"] for r in again["results"])
    # The index built while the model loaded held the stored vectors already: no second build.
    assert index_cache.counters["full_builds"] == builds + 1


def test_a_configuration_without_vectors_ranks_over_the_index_the_others_use(client, imported) -> None:
    # A character has one cache entry: a BM25-only configuration asked between the default's queries
    # must not replace the default's index with one of its own (each switch reloaded it).
    ask(client, {"query": "绿禾公园"})
    character = Character.objects.get(name=NAME)
    entry = index_cache._cache[character.pk]
    before = {
        name: index_cache.counters[name] for name in ("full_builds", "snapshot_loads", "loads_on_request")
    }

    bm25 = ask(client, {"query": "绿禾公园"}, params="?explain=1&config=bm25-nekomem").json()
    assert bm25["vectors"] == "off" and bm25["config"] == "bm25-nekomem" and bm25["results"]
    assert all("cosine" not in r["explain"]["paths"] for r in bm25["results"])
    again = ask(client, {"query": "绿禾公园"}, params="?explain=1").json()
    assert again["vectors"] == "on"
    assert any("cosine" in r["explain"]["paths"] for r in again["results"])

    assert index_cache._cache[character.pk] is entry
    assert {name: index_cache.counters[name] for name in before} == before


def test_archived_facts_are_bm25_only(client, tmp_path) -> None:
    now = timezone.now()
    import_facts(
        tmp_path,
        "阿archive",
        [fact_entry("主人喜欢喝绿茶", now)],
        archive=[fact_entry("主人以前养过一只叫豆豆的猫", now - timedelta(days=30), archived_flag=True)],
    )
    body = ask(client, {"query": "豆豆 猫"}, name="阿archive", params="?explain=1").json()
    archived = [r for r in body["results"] if r["tier"] == "fact_archive"]
    assert archived and "cosine" not in archived[0]["explain"]["paths"]


def test_markdown_format_and_budgets(client, imported) -> None:
    response = ask(client, {"query": "科幻电影", "language": "zh"}, params="?format=markdown")
    text = response.content.decode()
    assert response.status_code == 200 and text.startswith("以下是与本次查询相关的记忆")
    assert "1. [事实/关于主人]" in text and "天前)" in text

    long_rows = [
        {"text": "很长的记忆" * 400, "tier": "fact", "entity": "master", "created_at": timezone.now()}
        for _ in range(10)
    ]
    block = render_recall_markdown(long_rows, language="en")
    lines = block.splitlines()
    assert count_tokens(block) <= BLOCK_TOKENS
    assert 1 < len(lines) - 1 < 10  # tail dropped, entries kept whole-line
    assert all(count_tokens(line) <= ENTRY_TOKENS + 40 for line in lines[1:])
    assert render_recall_markdown([], language="en", query_and_time=True).startswith("Nothing matched")
    assert (
        render_recall_markdown([], language="zh", query_and_time=True, failed=True) == "没有找到相关的记忆。"
    )
