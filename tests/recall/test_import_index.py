"""An import costs the recall index what it changed (issue 32): it logs the rows it wrote, like any
other change, and leaves the index built and saved, so a server's first query after it loads the
saved index or applies those rows instead of rebuilding."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from facts.models import RECALL_POOL, Fact
from nekomem.characters.models import Character, MemoryChange
from recall import index_cache
from recall.services import RecallRequest, recall_query
from tests.recall.support import fact_entry, import_facts

pytestmark = pytest.mark.django_db

NAME = "小雪"
TEXTS = [f"主人第{i}次提到喜欢的食物是第{i}号面包" for i in range(40)] + ["主人养了一只橘猫，名字叫团子"]


def texts(query: str) -> list[str]:
    return [row["text"] for row in recall_query(name=NAME, request=RecallRequest(query=query))["results"]]


NOW = timezone.now()


def entries() -> list[dict]:
    return [fact_entry(text, NOW - timedelta(hours=i)) for i, text in enumerate(TEXTS)]


def test_an_import_logs_the_rows_it_wrote_and_the_next_query_applies_just_those(tmp_path: Path) -> None:
    import_facts(tmp_path / "a", NAME, entries())
    character = Character.objects.get(name=NAME)
    assert texts("橘猫团子")[0] == TEXTS[-1]
    built, deltas = index_cache.counters["full_builds"], index_cache.counters["deltas"]
    version = character.memory_version

    new = fact_entry("主人下个月要去京都看红叶", timezone.now())
    import_facts(tmp_path / "b", NAME, [*entries(), new])  # the same file with one fact more

    added = Fact.objects.get(character=character, fact_id=new["id"])
    logged = list(
        MemoryChange.objects.filter(character=character, version__gt=version).values_list("pool", "row")
    )
    assert logged == [(RECALL_POOL, added.pk)]
    assert texts("京都红叶")[0] == "主人下个月要去京都看红叶"
    assert index_cache.counters["full_builds"] == built  # applied as one row, not rebuilt
    assert index_cache.counters["deltas"] == deltas + 1


def test_a_file_that_cannot_say_what_it_wrote_is_one_change_without_detail(tmp_path: Path) -> None:
    import_facts(tmp_path / "a", NAME, entries())
    character = Character.objects.get(name=NAME)
    version = character.memory_version
    folder = tmp_path / "b" / NAME
    folder.mkdir(parents=True)
    (folder / "recent.json").write_text(
        json.dumps([{"type": "human", "data": {"content": "你好"}}], ensure_ascii=False), encoding="utf-8"
    )
    from django.core.management import call_command

    call_command("import_memory", str(tmp_path / "b"), "--character", NAME, verbosity=0)
    logged = list(
        MemoryChange.objects.filter(character=character, version__gt=version).values_list("pool", "row")
    )
    assert logged == [("", None)]


def test_an_import_leaves_the_index_built_and_saved_for_the_next_process(tmp_path: Path) -> None:
    loads = index_cache.counters["snapshot_loads"]
    import_facts(tmp_path, NAME, entries())  # the import builds and saves the index itself
    built = index_cache.counters["full_builds"]
    assert list(Path(settings.RECALL_SNAPSHOT_DIR).rglob("*.pickle"))
    index_cache.clear()  # a server process that never saw the import

    assert texts("橘猫团子")[0] == TEXTS[-1]
    assert index_cache.counters["full_builds"] == built  # loaded, not built
    assert index_cache.counters["snapshot_loads"] == loads + 1


@override_settings(RECALL_BUILD_WAIT_SECONDS=2)  # the server's request path, which hands builds off
def test_a_saved_index_loads_on_the_request_thread_without_a_build_thread(tmp_path: Path) -> None:
    """The first query of a character this process does not hold loads the saved file itself: a build
    thread would open a database connection of its own for it (5-30 ms on PostgreSQL), more than the
    load (bench/many_characters.py)."""
    import_facts(tmp_path, NAME, entries())
    index_cache.clear()
    on_request, built = index_cache.counters["loads_on_request"], index_cache.counters["full_builds"]

    assert texts("橘猫团子")[0] == TEXTS[-1]
    assert index_cache.counters["loads_on_request"] == on_request + 1
    assert index_cache.counters["full_builds"] == built
    assert not index_cache._builds
