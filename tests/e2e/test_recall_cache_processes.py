"""Recall's per-character index cache is invalidated across server processes.

Two real servers (each started as ``make run`` starts it, one HTTP worker each) share one
database. Server A answers a query and caches the character's index; a fact is edited through
server B; server A's next answer reflects the edit, because the cache is keyed on the character's
``memory_version`` in the database, not on anything process-local.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.recall_servers import (
    CHARACTER,
    FACTS,
    recalled_texts,
    two_servers_one_cached_index,
    write_facts,
)
from tests.support.server_process import ServerProcess, http_call, postgres_base_url, server_backend

pytestmark = [pytest.mark.slow, pytest.mark.django_db]


def test_an_edit_through_one_server_invalidates_the_other_servers_index(tmp_path: Path) -> None:
    with two_servers_one_cached_index(tmp_path) as (server_a, server_b):
        edited = http_call(
            server_b.port,
            "PATCH",
            f"/api/v1/characters/{CHARACTER}/facts/{FACTS[0][0]}/",
            {"text": "主人养了一只柴犬，名字叫豆豆"},
        )
        assert edited.status == 200, edited.text

        after = recalled_texts(server_a.port, "柴犬豆豆")
        assert after and after[0] == "主人养了一只柴犬，名字叫豆豆"
        assert FACTS[0][1] not in recalled_texts(server_a.port, "橘猫团子")


def recall_explained(port: int, query: str) -> tuple[list[str], dict[str, int]]:
    answer = http_call(port, "POST", f"/query_memory/{CHARACTER}", {"query": query, "explain": True})
    assert answer.status == 200, answer.text
    body = answer.json()
    return [row["text"] for row in body["results"]], body["index"]


ADD_FACT = (
    "from facts.services import FactDraft, facts_persist; "
    "from nekomem.characters.models import Character; "
    "facts_persist(character_id=Character.objects.get(name='{name}').pk, drafts=[FactDraft(text='{text}')])"
)


def test_changes_from_other_processes_reach_an_index_as_rows(tmp_path: Path) -> None:
    """Add (a management process), edit and delete (server A's REST API): server B's next answer
    reflects each, and B's own counters show it applied deltas, never rebuilding after the first build."""
    with server_backend(
        tmp_path / "a",
        postgres_url=postgres_base_url(),
        redis_base_url=os.environ.get("REDIS_URL") or None,
    ) as server_a:
        server_a.extra_env["NEKOMEM_WORKERS"] = "1"
        server_a.start()
        write_facts(tmp_path / "import")
        server_a.manage("import_memory", str(tmp_path / "import"))
        server_b = ServerProcess(
            database=server_a.database,
            var_dir=tmp_path / "b" / "var",
            redis_url=server_a.redis_url,
            extra_env={"NEKOMEM_WORKERS": "1"},
        )
        try:
            server_b.start()
            found, first = recall_explained(server_b.port, "橘猫团子")
            assert found[0] == FACTS[0][1] and first["full_builds"] == 1

            server_a.manage("shell", "-c", ADD_FACT.format(name=CHARACTER, text="主人最近在学弹吉他"))
            found, after_add = recall_explained(server_b.port, "吉他")
            assert found[0] == "主人最近在学弹吉他"

            edited = http_call(
                server_a.port,
                "PATCH",
                f"/api/v1/characters/{CHARACTER}/facts/{FACTS[0][0]}/",
                {"text": "主人养了一只柴犬，名字叫豆豆"},
            )
            assert edited.status == 200, edited.text
            found, after_edit = recall_explained(server_b.port, "柴犬豆豆")
            assert found[0] == "主人养了一只柴犬，名字叫豆豆"
            assert FACTS[0][1] not in recalled_texts(server_b.port, "橘猫团子")

            deleted = http_call(
                server_a.port, "DELETE", f"/api/v1/characters/{CHARACTER}/facts/{FACTS[2][0]}/"
            )
            assert deleted.status == 200 and deleted.json()["removed"]["facts"] == 1, deleted.text
            found, after_delete = recall_explained(server_b.port, "爬山")
            assert FACTS[2][1] not in found

            assert after_delete["full_builds"] == 1  # one build, then every change as rows
            assert after_add["deltas"] >= 1 and after_edit["deltas"] > after_add["deltas"]
            assert after_delete["deltas"] > after_edit["deltas"]
        finally:
            server_b.stop()
