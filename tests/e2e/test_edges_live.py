"""Edges that only real server processes show (issue 14).

- Storage block and release, and ``/reload``, take effect in every server before the call returns:
  two real servers (one HTTP worker each) share one database; the call goes to A, B is asked at once.
- A chunked body, sent raw with http.client to granian, is stored, not taken for empty.
- SIGTERM to ``serve`` while a background task is busy (an LLM call that does not answer) stops
  every process within seconds: no django-q2 worker outlives ``serve``.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.support.llm_server import TEST_API_KEY, Reply
from tests.support.server_process import (
    HttpResult,
    ServerProcess,
    history_body,
    http_call,
    postgres_base_url,
    server_backend,
    still_running,
    two_servers_one_database,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

CHARACTER = "小天"
SHARED_TOKEN = "e2e-edges-shared-secret"


def turn(text: str) -> dict:
    return history_body([{"type": "human", "data": {"content": text}}])


def internal_call(port: int, path: str, body: dict) -> HttpResult:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(
            "POST",
            path,
            body=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {SHARED_TOKEN}"},
        )
        response = conn.getresponse()
        return HttpResult(response.status, response.read())
    finally:
        conn.close()


def chunked_call(port: int, path: str, body: bytes) -> HttpResult:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        pieces = (body[i : i + 1000] for i in range(0, len(body), 1000))
        conn.request(
            "POST",
            quote(path),
            body=pieces,
            headers={"Content-Type": "application/json"},
            encode_chunked=True,
        )
        response = conn.getresponse()
        return HttpResult(response.status, response.read())
    finally:
        conn.close()


@pytest.fixture(scope="module")
def two_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Started once for the module: each start runs migrate and the rest of the run recipe."""
    with two_servers_one_database(
        tmp_path_factory.mktemp("two_servers"),
        env={"NEKOMEM_WORKERS": "1", "NEKOMEM_API_TOKEN": SHARED_TOKEN},
    ) as servers:
        yield servers


def test_block_and_release_through_one_server_apply_in_the_other_at_once(two_servers) -> None:
    server_a, server_b = two_servers
    for round_ in range(3):  # the old per-process cache let one of these through within its second
        assert http_call(server_b.port, "POST", f"/cache/{CHARACTER}", turn(f"开着 {round_}")).status == 200
        blocked = internal_call(server_a.port, "/internal/storage/startup/block", {"reason": "restore"})
        assert blocked.status == 200, blocked.text
        refused = http_call(server_b.port, "POST", f"/cache/{CHARACTER}", turn(f"锁着 {round_}"))
        assert refused.status == 409, refused.text
        assert refused.json()["blocking_reason"] == "restore"

        released = internal_call(server_a.port, "/internal/storage/startup/continue", {})
        assert released.json() == {"ok": True, "limited_mode": False}
        served = http_call(server_b.port, "POST", f"/cache/{CHARACTER}", turn(f"又开了 {round_}"))
        assert served.status == 200, served.text
    stored = server_a.database.query("SELECT message FROM recent_rawmessage")
    assert not [row for row in stored if "锁着" in row[0]]
    assert len(stored) == 6


def test_reload_through_one_server_drops_the_other_servers_caches_at_once(two_servers) -> None:
    server_a, server_b = two_servers
    config = "/api/v1/powerful_memory_config"
    assert http_call(server_b.port, "GET", config).json() == {"enabled": True}  # B caches the switch
    assert http_call(server_a.port, "POST", config, {"enabled": False}).json() == {"enabled": False}
    reloaded = internal_call(server_a.port, "/reload", {})
    assert reloaded.status == 200, reloaded.text
    assert http_call(server_b.port, "GET", config).json() == {"enabled": False}


def test_a_chunked_body_reaches_the_view_through_granian(two_servers) -> None:
    server_a, _ = two_servers
    body = json.dumps(turn("分块发送的一句话" * 200), ensure_ascii=False).encode()
    answer = chunked_call(server_a.port, f"/cache/{CHARACTER}", body)
    assert answer.status == 200, answer.text
    assert answer.json() == {"status": "cached", "count": 1}
    too_large = chunked_call(server_a.port, f"/cache/{CHARACTER}", b" " * (8 * 1024 * 1024 + 1))
    assert too_large.status == 413
    assert too_large.json()["error_code"] == "body_too_large"
    stored = [row[0] for row in server_a.database.query("SELECT message FROM recent_rawmessage")]
    assert len([message for message in stored if "分块发送的一句话" in message]) == 1


def test_sigterm_while_a_long_background_task_runs_leaves_no_process_behind(
    tmp_path: Path, llm_server
) -> None:
    llm_server.fallback = lambda request: Reply(content="[]", delay=600)  # the task never finishes
    llm_server.allow_unexpected = True
    with server_backend(
        tmp_path, postgres_url=postgres_base_url(), redis_base_url=os.environ.get("REDIS_URL") or None
    ) as server:
        server.extra_env.update(
            NEKOMEM_LLM_SUMMARY_BASE_URL=llm_server.base_url,
            NEKOMEM_LLM_SUMMARY_API_KEY=TEST_API_KEY,
            NEKOMEM_LLM_SUMMARY_MODEL="test-summary-model",
            NEKOMEM_LLM_TIMEOUT="600",
        )
        server.start()
        # Powerful memory off: each turn's post-turn op asks the LLM for facts right away.
        off = http_call(server.port, "POST", "/api/v1/powerful_memory_config", {"enabled": False})
        assert off.json() == {"enabled": False}
        assert http_call(server.port, "POST", f"/cache/{CHARACTER}", turn("我下周要去杭州出差")).status == 200
        deadline = time.monotonic() + 60
        while not llm_server.requests and time.monotonic() < deadline:
            time.sleep(0.1)
        assert llm_server.requests, f"the background task never called the LLM:\n{server.log_tail()}"

        assert server.process is not None
        tree = server.processes()
        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=60)
        serve_exited = time.monotonic()
        while still_running(tree) and time.monotonic() - serve_exited < 10:
            time.sleep(0.05)
        left = still_running(tree)
        assert not left, f"outlived serve by 10 s: {[tree[pid].cmdline for pid in left]}"
        assert serve_exited - started < 15  # the busy worker did not hold the stop for its task
