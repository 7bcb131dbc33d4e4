"""``manage.py serve`` refuses a port that is taken before it starts anything."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from nekomem.runtime.management.commands.serve import port_in_use
from tests.support.server_process import REPO_ROOT, free_port


@pytest.fixture
def listener() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_a_listening_port_is_in_use_and_a_free_one_is_not(listener: int) -> None:
    assert port_in_use("127.0.0.1", listener)
    assert not port_in_use("127.0.0.1", free_port())


def test_a_closed_connection_in_time_wait_does_not_hold_the_port() -> None:
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as granian's listener does
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = server.accept()
        accepted.close()  # the server side closes first: its end waits in TIME_WAIT
        client.close()
    assert not port_in_use("127.0.0.1", port)


@pytest.mark.slow
def test_serve_on_a_taken_port_says_so_and_starts_nothing(listener: int, tmp_path) -> None:
    env = {
        "PATH": "/usr/bin:/bin",
        "DJANGO_SETTINGS_MODULE": "nekomem.settings",
        "NEKOMEM_VAR_DIR": str(tmp_path),
        "NEKOMEM_PORT": str(listener),
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "serve"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert f"127.0.0.1:{listener} is already in use" in done.stderr
    assert "NEKOMEM_PORT" in done.stderr
    assert "memory server on" not in done.stdout  # nothing was started
