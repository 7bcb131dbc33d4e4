"""``manage.py serve`` refuses a port that is taken before it starts anything, and does not wait out
its whole grace for an HTTP server whose stop hangs with no connection left open."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from nekomem.runtime.management.commands import serve
from nekomem.runtime.management.commands.serve import open_connections, port_in_use
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


def _ignores_sigterm() -> subprocess.Popen[bytes]:
    """A child that, like a granian worker deadlocked in its shutdown, outlives SIGTERM."""
    code = "import signal as s, time; s.signal(s.SIGTERM, s.SIG_IGN); print(1, flush=True); time.sleep(60)"
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, process_group=0)
    assert child.stdout is not None and child.stdout.readline()  # the handler is in place
    return child


def test_open_connections_counts_the_connections_to_a_port_while_they_are_open(listener: int) -> None:
    assert open_connections(listener) == 0
    client = socket.create_connection(("127.0.0.1", listener))
    assert open_connections(listener) == 1  # the server end (the client end is on another local port)
    client.close()


def test_a_hung_http_server_with_no_connection_open_is_killed_after_the_idle_wait(listener: int) -> None:
    child = _ignores_sigterm()
    started = time.monotonic()
    serve._stop_children([child], graces=[20], http_port=listener)
    took = time.monotonic() - started
    assert child.returncode == -9
    assert serve.IDLE_STOP_SECONDS <= took < serve.IDLE_STOP_SECONDS + 3, took


def test_a_hung_http_server_with_a_connection_open_gets_its_whole_grace(listener: int) -> None:
    child = _ignores_sigterm()
    with socket.create_connection(("127.0.0.1", listener)):
        started = time.monotonic()
        serve._stop_children([child], graces=[4], http_port=listener)
        took = time.monotonic() - started
    assert child.returncode == -9
    assert took >= 4, took


@pytest.mark.slow
def test_a_server_process_switches_threads_every_millisecond_and_freezes_what_it_loaded(tmp_path) -> None:
    # Loading the application is what granian does in each worker; its view threads then share the
    # interpreter lock at 1 ms turns instead of Python's 5 ms.
    env = {
        "PATH": "/usr/bin:/bin",
        "DJANGO_SETTINGS_MODULE": "nekomem.settings",
        "NEKOMEM_VAR_DIR": str(tmp_path),
    }
    code = (
        "import sys; before = sys.getswitchinterval(); import nekomem.wsgi; "
        "from nekomem.runtime import long_lived; "
        "print(before, sys.getswitchinterval(), int(long_lived._freezing))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    before, after, freezing = (float(v) for v in done.stdout.split()[-3:])
    assert before == 0.005 and after == 0.001
    # What it loaded is frozen, and so, from then on, what its long-lived builds make.
    assert freezing == 1
