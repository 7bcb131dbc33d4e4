"""numpy in the server's processes has no thread pool of its own: no OpenBLAS thread spins on a core
between two queries (nekomem/runtime/native_threads.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from nekomem.runtime import native_threads
from tests.support.server_process import REPO_ROOT

COUNT_THREADS = "import os, numpy; print(len(os.listdir('/proc/self/task')))"


def threads_after_numpy_loads(extra: dict[str, str]) -> int:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **extra}
    command = [sys.executable, "-c", COUNT_THREADS]
    done = subprocess.run(command, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenBLAS starts no pool on one core")
def test_numpy_started_with_the_servers_variables_runs_on_one_thread(monkeypatch) -> None:
    for name in native_threads.SINGLE_THREADED:
        monkeypatch.delenv(name, raising=False)
    assert threads_after_numpy_loads({}) > 1  # OpenBLAS's pool, one thread per core
    assert threads_after_numpy_loads(dict(native_threads.SINGLE_THREADED)) == 1


def test_an_operators_own_setting_is_kept(monkeypatch) -> None:
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    native_threads.single_threaded_here()
    assert os.environ["OPENBLAS_NUM_THREADS"] == "2" and os.environ["OMP_NUM_THREADS"] == "1"
