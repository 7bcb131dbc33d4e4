"""A query never waits longer than ``RECALL_BUILD_WAIT_SECONDS`` for its character's index: while a
large build runs (after an import) it answers from the rows that hold its words and says why, and the
build goes on in the background (or in the process that claimed it); a stale index of the same
character serves meanwhile where this process has one."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from nekomem.characters.models import Character
from nekomem.characters.services import character_memory_changed
from recall import index_cache
from recall.backfill import embedding_backfill
from tests.recall.support import fact_entry, import_facts, require_muse

pytestmark = pytest.mark.django_db(transaction=True)
NAME = "小枫"


def ask(client, query: str) -> dict:
    answer = client.post(
        f"/query_memory/{NAME}", data=json.dumps({"query": query}), content_type="application/json"
    )
    assert answer.status_code == 200
    return answer.json()


def wait_for_builds(seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while index_cache._builds and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not index_cache._builds


# No saved indexes: the process builds (the import built and saved one, which a server would load).
@override_settings(RECALL_BUILD_WAIT_SECONDS=0.05, RECALL_SNAPSHOT_DIR="")
def test_a_query_during_a_long_build_answers_from_the_rows_then_the_index(client, tmp_path: Path) -> None:
    now = timezone.now()
    texts = ["主人养了一只橘猫，名字叫团子", "主人今天去京都看了红叶"]
    import_facts(tmp_path, NAME, [fact_entry(text, now - timedelta(days=1)) for text in texts])
    index_cache.clear()  # a server process that did not run the import
    character = Character.objects.get(name=NAME)
    build_lock = index_cache._build_locks.setdefault(character.pk, threading.Lock())
    with build_lock:  # another build of this character holds the lock: this one cannot finish yet
        started = time.monotonic()
        body = ask(client, "橘猫团子")
        assert time.monotonic() - started < 5
        # Never "nothing" for what was imported: the rows holding the query's words, ranked.
        assert body["index_building"] is True and "error_code" not in body
        assert [r["text"] for r in body["results"]] == [texts[0]]
        assert [r["text"] for r in ask(client, "cat")["results"]] == []  # no word in common: none
    wait_for_builds()
    body = ask(client, "橘猫团子")
    assert "error_code" not in body and "index_building" not in body
    assert [r["text"] for r in body["results"]] == [texts[0]]


@override_settings(RECALL_BUILD_WAIT_SECONDS=0.05)
def test_a_build_another_process_claimed_is_awaited_and_loaded_not_built_again(
    client, tmp_path: Path
) -> None:
    now = timezone.now()
    import_facts(tmp_path, NAME, [fact_entry("主人养了一只橘猫，名字叫团子", now - timedelta(days=1))])
    index_cache.clear()
    character = Character.objects.get(name=NAME)
    # The task cluster's claim, its index not saved yet (a live process of this host: the test
    # runner's parent stands for it).
    saved = next(Path(settings.RECALL_SNAPSHOT_DIR).rglob(f"{character.pk}-*.pickle"))
    aside = saved.rename(tmp_path / "saved.pickle")
    claim = saved.parent / f"{character.pk}.building"
    claim.write_text(f"{socket.gethostname()} {os.getppid()} building")
    built = index_cache.counters["full_builds"]
    body = ask(client, "橘猫团子")
    assert body["index_building"] is True
    assert [r["text"] for r in body["results"]] == ["主人养了一只橘猫，名字叫团子"]
    aside.rename(saved)  # the claimed build saved its index and let go
    claim.unlink()
    wait_for_builds()
    body = ask(client, "橘猫团子")
    assert "index_building" not in body and body["results"]
    assert index_cache.counters["full_builds"] == built  # its saved index loaded, not built here


@override_settings(RECALL_BUILD_WAIT_SECONDS=0.05)
def test_a_stale_index_serves_while_its_rebuild_runs(client, tmp_path: Path) -> None:
    now = timezone.now()
    import_facts(tmp_path, NAME, [fact_entry("主人每天早上喝一杯冰美式", now - timedelta(days=1))])
    character = Character.objects.get(name=NAME)
    ask(client, "冰美式")  # builds (or loads) within the wait: the test's data is tiny
    wait_for_builds()
    assert [r["text"] for r in ask(client, "冰美式")["results"]] == ["主人每天早上喝一杯冰美式"]
    character_memory_changed(character_id=character.pk)  # a change without detail: only a rebuild is safe
    build_lock = index_cache._build_locks[character.pk]
    with build_lock:
        body = ask(client, "冰美式")
        assert "error_code" not in body  # the index this process had answers meanwhile
        assert [r["text"] for r in body["results"]] == ["主人每天早上喝一杯冰美式"]
    wait_for_builds()
    assert index_cache._cache[character.pk].version == Character.objects.get(pk=character.pk).memory_version


@override_settings(RECALL_BUILD_WAIT_SECONDS=5)
def test_backfilled_vectors_are_filled_in_off_the_request(client, tmp_path: Path) -> None:
    require_muse()
    now = timezone.now()
    import_facts(tmp_path, NAME, [fact_entry("Master adopted a tiny kitten from the shelter", now)])
    character = Character.objects.get(name=NAME)
    ask(client, "kitten")
    wait_for_builds()
    builds = index_cache.counters["full_builds"]
    assert embedding_backfill(character_id=character.pk).embedded == 1
    ask(client, "kitten")  # notes the vector; a thread of its own fills it in
    entry = index_cache._cache[character.pk]
    deadline = time.monotonic() + 30
    while (entry.filling or entry.index.deferred_vectors) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not entry.index.deferred_vectors and entry.index.has_vector.all()
    answer = client.post(
        f"/query_memory/{NAME}?explain=1",
        data=json.dumps({"query": "new pet cat"}),
        content_type="application/json",
    ).json()
    assert "cosine" in answer["results"][0]["explain"]["paths"]  # found by meaning: no word in common
    assert index_cache.counters["full_builds"] == builds


def wait_for_fill(entry, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while (entry.filling or entry.index.deferred_vectors) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not entry.filling and not entry.index.deferred_vectors


@override_settings(RECALL_BUILD_WAIT_SECONDS=5)
def test_one_thread_fills_the_vectors_of_every_index_fill_after_fill(client, tmp_path: Path) -> None:
    """A thread (and so a database connection) per fill forked a PostgreSQL backend per fill."""
    require_muse()
    now = timezone.now()
    other = "阿澈"
    import_facts(tmp_path / "a", NAME, [fact_entry("Master adopted a tiny kitten from the shelter", now)])
    import_facts(tmp_path / "b", other, [fact_entry("Master plays the cello every Sunday", now)])
    filled: list[threading.Thread | None] = []
    for name, query in ((NAME, "kitten"), (other, "cello")):
        character = Character.objects.get(name=name)
        client.post(
            f"/query_memory/{name}", data=json.dumps({"query": query}), content_type="application/json"
        )
        wait_for_builds()
        assert embedding_backfill(character_id=character.pk).embedded == 1
        client.post(
            f"/query_memory/{name}", data=json.dumps({"query": query}), content_type="application/json"
        )
        entry = index_cache._cache[character.pk]
        wait_for_fill(entry)
        assert entry.index.has_vector.all()
        filled.append(index_cache._vector_filler._thread)
    assert filled[0] is not None and filled[0] is filled[1] and filled[0].is_alive()
    assert [t.name for t in threading.enumerate()].count("recall-vectors") == 1
