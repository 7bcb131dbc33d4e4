"""``make run`` with no configuration: the Makefile's run recipe (migrate, setup_schedules, prestart,
serve) on the embedded default, under a var/ directory of its own, across a restart."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.dataset import as_messages, conversation
from tests.support.server_process import ServerProcess, history_body, http_call

# django_db only makes pytest-django set up the test database for the session's startup fixture.
pytestmark = [pytest.mark.slow, pytest.mark.django_db]

CHARACTER = "小天"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    # No DATABASE_URL and no REDIS_URL: SQLite under NEKOMEM_VAR_DIR and the ORM broker.
    server = ServerProcess(database=None, var_dir=tmp_path / "var")
    try:
        yield server
    finally:
        server.stop()


def test_make_run_serves_a_cached_turn_in_new_dialog_and_keeps_it_across_a_restart(
    server: ServerProcess,
) -> None:
    turn = conversation("memorybank-cn")[:2]
    server.start()

    health = http_call(server.port, "GET", "/health")
    assert health.status == 200
    assert health.json()["status"] == "ok" and health.json()["limited_mode"] is False
    cached = http_call(server.port, "POST", f"/cache/{CHARACTER}", history_body(as_messages(turn), "zh"))
    assert (cached.status, cached.json()) == (200, {"status": "cached", "count": 2})

    def dialog_lines() -> list[str]:
        response = http_call(server.port, "GET", f"/new_dialog/{CHARACTER}")
        assert response.status == 200
        return response.text.splitlines()

    before = dialog_lines()
    for row in turn:
        assert any(line.endswith(f"| {row['text'].strip()}") for line in before), (row, before)
    assert (server.var_dir / "nekomem.sqlite3").exists()  # the default store, under var/

    server.stop()
    server.start()
    after = dialog_lines()
    recent = [line for line in after if " | " in line]
    assert recent == [line for line in before if " | " in line]


def _server_processes(server: ServerProcess) -> dict[int, tuple[str, int]]:
    """pid -> (command line, niceness) of every process in the server's process group."""
    assert server.process is not None
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if int(fields[2]) == server.process.pid:  # the process group
            found[int(pid)] = (cmdline, int(fields[16]))
    return found


def test_the_cluster_runs_at_a_lower_priority_than_the_http_server(server: ServerProcess) -> None:
    server.start()
    processes = _server_processes(server).values()
    cluster = [nice for cmdline, nice in processes if "qcluster" in cmdline]
    http = [nice for cmdline, nice in processes if "granian" in cmdline]
    assert cluster and http
    assert set(http) == {os.getpriority(os.PRIO_PROCESS, 0)}
    assert set(cluster) == {min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10)}
