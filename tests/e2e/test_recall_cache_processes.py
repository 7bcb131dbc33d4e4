"""Recall's per-character index cache is invalidated across server processes.

Two real servers (each started as ``make run`` starts it, one HTTP worker each) share one
database. Server A answers a query and caches the character's index; a fact is edited through
server B; server A's next answer reflects the edit, because the cache is keyed on the character's
``memory_version`` in the database, not on anything process-local.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.recall_servers import CHARACTER, FACTS, recalled_texts, two_servers_one_cached_index
from tests.support.server_process import http_call

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
