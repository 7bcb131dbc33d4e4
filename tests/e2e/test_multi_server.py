"""Past one machine: two servers and two django-q2 clusters on one PostgreSQL and one Redis.

Each server is started as ``make run`` starts it, configured by environment only, on its own port;
both clusters consume one queue (the same ``NEKOMEM_Q_NAME``). A mixed load of ``/cache``,
``/query_memory`` and ``/new_dialog`` goes to both at once, then the test checks what must hold
across them: the per-character lock (no turn lost, none interleaved, each writer's turns in order),
the recall caches (what one server wrote, the other answers with), and the outbox (every post-turn
op done exactly once over, none dead).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections import defaultdict
from pathlib import Path

import pytest

from tests.support.server_process import (
    ServerProcess,
    history_body,
    http_call,
    postgres_base_url,
    server_backend,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db,
    pytest.mark.skipif(
        not (postgres_base_url() and os.environ.get("REDIS_URL")),
        reason="several servers share PostgreSQL and Redis (the make test-postgres run)",
    ),
]

CHARACTERS = ("小天", "Mika", "阿凛的猫")
WRITERS_PER_CHARACTER = 2  # one writing through each server
TURNS_PER_WRITER = 8


def turn_messages(character: str, writer: int, turn: int) -> list[dict[str, object]]:
    tag = f"{character}-w{writer}-t{turn}"
    return [
        {"type": "human", "data": {"content": f"今天我们聊了周末去哪里玩 {tag}"}},
        {"type": "ai", "data": {"content": f"Maybe the lake by the old mill, it is quiet there. {tag}"}},
    ]


def test_two_servers_and_two_clusters_share_the_lock_the_caches_and_the_outbox(tmp_path: Path) -> None:
    with server_backend(
        tmp_path / "a", postgres_url=postgres_base_url(), redis_base_url=os.environ["REDIS_URL"]
    ) as server_a:
        # As the README's "Past one machine" says: one secret everywhere, or a cluster cannot read
        # the tasks another machine signed (and the internal routes' token differs).
        shared = {"NEKOMEM_WORKERS": "2", "NEKOMEM_SECRET_KEY": "multi-server-test-secret-" + "x" * 40}
        server_a.extra_env.update(shared)
        server_a.start()
        server_b = ServerProcess(
            database=server_a.database,
            var_dir=tmp_path / "b" / "var",
            redis_url=server_a.redis_url,
            q_name=server_a.q_name,  # one queue, two clusters
            extra_env=dict(shared),
        )
        try:
            server_b.start()
            _run_mixed_load_and_check(server_a, server_b)
        finally:
            server_b.stop()


def _run_mixed_load_and_check(server_a: ServerProcess, server_b: ServerProcess) -> None:
    servers = (server_a, server_b)
    failures: list[str] = []

    def writer(character: str, index: int) -> None:
        server = servers[index % 2]
        for turn in range(TURNS_PER_WRITER):
            body = history_body(turn_messages(character, index, turn), "zh")
            answer = http_call(server.port, "POST", f"/cache/{character}", body)
            if answer.status != 200 or answer.json().get("status") != "cached":
                failures.append(f"/cache {character} w{index} t{turn}: {answer.status} {answer.text[:200]}")
            # Readers on the other server at the same time.
            other = servers[(index + 1) % 2]
            query = http_call(other.port, "POST", f"/query_memory/{character}", {"query": "周末去哪里玩"})
            if query.status != 200 or "error_code" in query.json():
                failures.append(f"/query_memory {character}: {query.status} {query.text[:200]}")
            dialog = http_call(other.port, "GET", f"/new_dialog/{character}")
            if dialog.status != 200:
                failures.append(f"/new_dialog {character}: {dialog.status}")

    threads = [
        threading.Thread(target=writer, args=(character, index))
        for character in CHARACTERS
        for index in range(WRITERS_PER_CHARACTER)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not failures, failures[:5]

    database = server_a.database
    assert database is not None
    for character in CHARACTERS:
        (character_id,) = database.query("SELECT id FROM characters_character WHERE name = %s", [character])[
            0
        ]
        # The per-character lock: every message is in the raw log once, and in the recent window
        # each turn's two messages sit next to each other, and each writer's turns are in its order.
        raw = database.query("SELECT COUNT(*) FROM recent_rawmessage WHERE character_id = %s", [character_id])
        assert raw[0][0] == WRITERS_PER_CHARACTER * TURNS_PER_WRITER * 2, character
        window = [
            (json.loads(row[0]) if isinstance(row[0], str) else row[0])["content"]
            for row in database.query(
                "SELECT data FROM recent_recentmessage WHERE character_id = %s ORDER BY position",
                [character_id],
            )
        ]
        tags = [text.rsplit(" ", 1)[1] for text in window]
        assert len(tags) % 2 == 0 and all(tags[i] == tags[i + 1] for i in range(0, len(tags), 2)), tags
        order: dict[str, list[int]] = defaultdict(list)
        for tag in tags[::2]:
            _name, writer_tag, turn_tag = tag.rsplit("-", 2)
            order[writer_tag].append(int(turn_tag[1:]))
        assert all(turns == sorted(turns) for turns in order.values()), order

        # The caches: what was written through A is in B's working context and the other way.
        for server, writer_index in ((server_b, 0), (server_a, 1)):
            dialog = http_call(server.port, "GET", f"/new_dialog/{character}").text
            assert f"{character}-w{writer_index}-t{TURNS_PER_WRITER - 1}" in dialog, (
                server.port,
                writer_index,
            )

    # The outbox: both clusters drain one queue; every post-turn op ends done, none dead.
    deadline = time.monotonic() + 120
    statuses: dict[str, int] = {}
    while time.monotonic() < deadline:
        statuses = dict(database.query("SELECT status, COUNT(*) FROM journal_outboxop GROUP BY status"))
        if set(statuses) <= {"done", "waiting"}:
            break
        time.sleep(0.5)
    assert set(statuses) <= {"done", "waiting"}, statuses
    # Without an LLM provider the post-turn op either finishes or waits for one, never dies.
    assert statuses.get("dead", 0) == 0
    assert sum(statuses.values()) == len(CHARACTERS) * WRITERS_PER_CHARACTER * TURNS_PER_WRITER
