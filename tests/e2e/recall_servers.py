"""Two real servers sharing one database, the first with a character's recall index cached.

Each is started as ``make run`` starts it, with one HTTP worker, so a test that changes memory
through server B can check that server A's cached index does not answer with the old state.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

from tests.support.server_process import ServerProcess, http_call, postgres_base_url, server_backend

CHARACTER = "小天"
FACTS = [
    ("fact_20240501120000_aaaaaaaa", "主人养了一只橘猫，名字叫团子"),
    ("fact_20240502120000_bbbbbbbb", "主人每天早上喝一杯冰美式"),
    ("fact_20240503120000_cccccccc", "主人周末喜欢去爬山"),
]


def write_facts(root: Path) -> None:
    folder = root / CHARACTER
    folder.mkdir(parents=True)
    facts: list[dict[str, object]] = [
        {
            "id": fact_id,
            "text": text,
            "importance": 7,
            "entity": "master",
            "source": "user_observation",
            "tags": [],
            "hash": fact_id[-8:] * 2,
            "created_at": f"2024-05-0{i + 1}T12:00:00",
            "event_when_raw": None,
            "event_start_at": f"2024-05-0{i + 1}T12:00:00",
            "event_end_at": None,
            "schema_version": 2,
            "absorbed": False,
            "signal_processed": True,
        }
        for i, (fact_id, text) in enumerate(FACTS)
    ]
    (folder / "facts.json").write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")


def recalled_texts(port: int, query: str) -> list[str]:
    answer = http_call(port, "POST", f"/query_memory/{CHARACTER}", {"query": query})
    assert answer.status == 200, answer.text
    assert "error_code" not in answer.json()
    return [row["text"] for row in answer.json()["results"]]


@contextlib.contextmanager
def two_servers_one_cached_index(
    tmp_path: Path, **b_env: str
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Server A with ``FACTS`` imported and its index of them cached, and server B on the same database."""
    with server_backend(
        tmp_path / "a",
        postgres_url=postgres_base_url(),
        redis_base_url=os.environ.get("REDIS_URL") or None,
    ) as server_a:
        server_a.extra_env["NEKOMEM_WORKERS"] = "1"
        server_a.start()
        write_facts(tmp_path / "import")
        server_a.manage("import_memory", str(tmp_path / "import"))
        assert recalled_texts(server_a.port, "橘猫团子")[0] == FACTS[0][1]  # A builds and caches the index

        server_b = ServerProcess(
            database=server_a.database,
            var_dir=tmp_path / "b" / "var",
            redis_url=server_a.redis_url,
            extra_env={"NEKOMEM_WORKERS": "1", **b_env},
        )
        try:
            server_b.start()
            yield server_a, server_b
        finally:
            server_b.stop()
