"""A character's first answer after an import, a restart or an eviction uses every vector the database
holds: the saved index, loaded, is completed with the vectors written since before it serves."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.test import override_settings
from django.utils import timezone

from nekomem.characters.models import Character
from recall import index_cache
from recall.backfill import embedding_backfill
from recall.index_cache import recall_indexes_save_vectors
from tests.recall.support import fact_entry, import_facts, require_muse

pytestmark = pytest.mark.django_db
NAME = "小满"
TEXTS = [
    "Master adopted a cat named Mochi",
    "Master keeps a red bicycle in the hall",
    "Master reads poetry every night",
    "主人在学钢琴",
]


def first_answer(client, query: str) -> dict[str, dict]:
    body = {"query": query, "explain": True}
    answer = client.post(f"/query_memory/{NAME}", data=json.dumps(body), content_type="application/json")
    assert answer.status_code == 200
    assert answer.json()["vectors"] == "on"
    return {row["text"]: row["explain"]["paths"] for row in answer.json()["results"]}


@override_settings(RECALL_BUILD_WAIT_SECONDS=5)  # as served: a catch-up defers the vectors it reads
@pytest.mark.parametrize("gone", ["import", "restart", "eviction"])
def test_the_first_query_after_an_import_ranks_by_the_vectors_in_the_database(
    client, tmp_path: Path, gone: str
) -> None:
    require_muse()
    now = timezone.now()
    import_facts(tmp_path, NAME, [fact_entry(t, now - timedelta(days=i + 1)) for i, t in enumerate(TEXTS)])
    character = Character.objects.get(name=NAME)
    # The import saved the index before any vector existed; the backfill writes them all after it.
    assert embedding_backfill(character_id=character.pk).embedded == len(TEXTS)
    # "import": this process prepared the index at the import and holds it, without the vectors.
    if gone == "restart":
        index_cache.clear()  # what a new worker holds: nothing, the saved index on disk
    elif gone == "eviction":
        with index_cache._lock:
            index_cache._cache.pop(character.pk)
    # "小猫" shares no word with any fact: only a vector finds the cat.
    paths = first_answer(client, "小猫")
    assert "cosine" in paths.get(TEXTS[0], {}), paths
    # Every fact the answer lists was ranked with its vector in the index.
    loaded = index_cache._cache[character.pk].index
    assert int(loaded.has_vector.sum()) == len(TEXTS)


@override_settings(RECALL_BUILD_WAIT_SECONDS=5)
def test_the_backfill_saves_the_index_with_its_vectors_so_a_start_loads_them(client, tmp_path: Path) -> None:
    require_muse()
    now = timezone.now()
    import_facts(tmp_path, NAME, [fact_entry(t, now - timedelta(days=i + 1)) for i, t in enumerate(TEXTS)])
    character = Character.objects.get(name=NAME)
    assert embedding_backfill(character_id=character.pk).embedded == len(TEXTS)
    index_cache.clear()  # the task worker holds no index: it loads the import's, completes and saves it
    assert recall_indexes_save_vectors([character.pk]) == 1
    assert character.pk not in index_cache._cache  # let go once saved
    fills = index_cache.counters["first_answer_fills"]
    loads = index_cache.counters["snapshot_loads"]
    paths = first_answer(client, "小猫")  # a worker that starts: the saved index has the vectors
    assert "cosine" in paths.get(TEXTS[0], {}), paths
    assert index_cache.counters["snapshot_loads"] == loads + 1
    assert index_cache.counters["first_answer_fills"] == fills  # nothing left to read before answering


@override_settings(RECALL_BUILD_WAIT_SECONDS=5)
def test_a_backfill_of_more_vectors_than_a_catch_up_takes_still_saves_the_index_without_a_rebuild(
    client, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_muse()
    # The import's 20 000 raw turns embedded in one tick after the facts: more vectors since the save
    # than a catch-up of changed rows takes. Here 4 vectors against a limit of 2.
    monkeypatch.setattr("recall.index_cache.catch_up.MAX_DELTA_ROWS", 2)
    now = timezone.now()
    import_facts(tmp_path, NAME, [fact_entry(t, now - timedelta(days=i + 1)) for i, t in enumerate(TEXTS)])
    character = Character.objects.get(name=NAME)
    assert embedding_backfill(character_id=character.pk).embedded == len(TEXTS)
    index_cache.clear()
    builds = index_cache.counters["full_builds"]
    assert recall_indexes_save_vectors([character.pk]) == 1
    assert index_cache.counters["full_builds"] == builds  # completed from the saved file, not rebuilt
    fills = index_cache.counters["first_answer_fills"]
    loads = index_cache.counters["snapshot_loads"]
    paths = first_answer(client, "小猫")  # a worker that starts loads the file, its vectors in it
    assert "cosine" in paths.get(TEXTS[0], {}), paths
    assert index_cache.counters["snapshot_loads"] == loads + 1
    assert index_cache.counters["first_answer_fills"] == fills
    assert index_cache.counters["full_builds"] == builds
