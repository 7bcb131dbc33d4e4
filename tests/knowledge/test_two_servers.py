"""Several servers on one PostgreSQL database answer from the same packs: a pack imported, an entry
disabled or a pack removed through one is answered by the other within 2 s (issue 48, beyond the
original). Two real server processes (``manage.py serve``, one HTTP worker each) on loopback ports;
skipped on SQLite, where one server owns its database file."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.knowledge.factories import fixture_pack, pack_bytes
from tests.support.server_process import (
    HttpResult,
    ServerProcess,
    postgres_base_url,
    two_servers_one_database,
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db,
    pytest.mark.skipif(postgres_base_url() is None, reason="one server per SQLite database"),
]

TOKEN = "knowledge-two-servers-secret"
SEEN_WITHIN = 2.0


def call(port: int, method: str, route: str, body: Any = None) -> HttpResult:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    try:
        conn.request(
            method,
            f"/internal/knowledge/{route}",
            body=data,
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"},
        )
        response = conn.getresponse()
        return HttpResult(response.status, response.read())
    finally:
        conn.close()


def titles_found(port: int, query: str) -> list[str]:
    answer = call(port, "POST", "query", {"query": query, "budget_ms": 2000, "limit": 3})
    assert answer.status == 200, answer.text
    return [hit["title"] for hit in answer.json()["hits"]]


def seconds_until(check: Callable[[], bool], *, timeout: float) -> float | None:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if check():
            return time.monotonic() - started
        time.sleep(0.05)
    return None


@pytest.fixture(scope="module")
def two_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    with two_servers_one_database(
        tmp_path_factory.mktemp("knowledge_two_servers"),
        env={"NEKOMEM_WORKERS": "1", "NEKOMEM_API_TOKEN": TOKEN},
    ) as servers:
        yield servers


def test_import_disable_and_remove_on_one_server_are_answered_by_the_other_within_2_s(two_servers) -> None:
    server_a, server_b = two_servers
    assert titles_found(server_b.port, "rickroll") == []  # B answers lookups: it has its index
    job = call(server_a.port, "POST", "packs/import", pack_bytes(fixture_pack()))
    assert job.status == 200 and job.json()["ok"], job.text

    def active_on_a() -> bool:
        jobs = call(server_a.port, "GET", "packs/jobs").json()["jobs"]
        return any(j["job_id"] == job.json()["job_id"] and j["state"] == "active" for j in jobs)

    # The import runs in A's task cluster; from its switch on, B must answer with it within 2 s.
    if seconds_until(active_on_a, timeout=180) is None:
        log = server_a.log_path.read_text(errors="replace")[-4000:] if server_a.log_path.exists() else ""
        pytest.fail(f"{call(server_a.port, 'GET', 'packs/jobs').text}\n{log}")
    seen = seconds_until(lambda: "Rickroll" in titles_found(server_b.port, "rickroll"), timeout=10)
    assert seen is not None and seen <= SEEN_WITHIN, seen

    disabled = call(
        server_a.port,
        "POST",
        "entry/disabled",
        {"pack_id": "memes.test", "title": "Rickroll", "disabled": True},
    )
    assert disabled.json()["ok"], disabled.text
    seen = seconds_until(lambda: "Rickroll" not in titles_found(server_b.port, "rickroll"), timeout=10)
    assert seen is not None and seen <= SEEN_WITHIN, seen
    assert "芝士雪豹" in titles_found(server_b.port, "芝士雪豹")

    removed = call(server_a.port, "POST", "packs/remove", {"pack_id": "memes.test"})
    assert removed.json()["ok"], removed.text
    seen = seconds_until(lambda: titles_found(server_b.port, "芝士雪豹") == [], timeout=10)
    assert seen is not None and seen <= SEEN_WITHIN, seen
    assert call(server_b.port, "GET", "availability").json()["tool_available"] is False
