"""A real round trip through django-q2's broker: a turn's op is enqueued on commit, a real
``qcluster`` process runs it, and the op ends ``done``.

Both brokers of the plain settings are covered: the ORM broker (always) and Redis (when this run has
``REDIS_URL``). The database is the run's kind (PostgreSQL when ``DATABASE_URL`` says so).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from nekomem.journal.broker import OUTBOX_TASK
from tests.support.server_process import REPO_ROOT, ServerProcess, postgres_base_url, server_backend

# django_db only makes pytest-django set up the test database for the session's startup fixture.
pytestmark = [pytest.mark.slow, pytest.mark.django_db]

CHARACTER = "小橘"
# Run in a `manage.py shell` of the plain settings: the real write path, enqueueing on commit.
RECORD_TURN = """
from recent.services import turn_record
from nekomem.journal.models import OutboxOp
turn_record(name="小橘", language="zh", messages=[
    {"type": "human", "data": {"content": "broker round trip 问"}},
    {"type": "ai", "data": {"content": "broker round trip 答"}},
])
print(OutboxOp.objects.get(character__name="小橘").op_id)
"""


@pytest.fixture(params=["orm", "redis"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServerProcess]:
    redis_base_url = os.environ.get("REDIS_URL") or None
    if request.param == "redis" and not redis_base_url:
        pytest.skip("REDIS_URL is not set in this run")
    with server_backend(
        tmp_path,
        postgres_url=postgres_base_url(),
        redis_base_url=redis_base_url if request.param == "redis" else None,
    ) as server:
        yield server


def queued_messages(server: ServerProcess) -> int:
    """How many task messages wait in the broker of this server's cluster."""
    if server.redis_url:
        import redis

        client = redis.Redis.from_url(server.redis_url)
        try:
            return int(client.llen(f"django_q:{server.q_name}:q"))  # type: ignore[arg-type]
        finally:
            client.close()
    assert server.database is not None
    return int(
        server.database.query("SELECT COUNT(*) FROM django_q_ormq WHERE key = %s", [server.q_name])[0][0]
    )


def op_status(server: ServerProcess, op_id: str) -> str:
    assert server.database is not None
    rows = server.database.query(
        "SELECT status FROM journal_outboxop WHERE op_id = %s", [op_id_param(server, op_id)]
    )
    return str(rows[0][0])


def op_id_param(server: ServerProcess, op_id: str) -> str:
    # Django stores UUIDs as 32 hex digits on SQLite and as the uuid type on PostgreSQL.
    assert server.database is not None
    return op_id.replace("-", "") if server.database.vendor == "sqlite" else op_id


@pytest.fixture
def cluster(server: ServerProcess) -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    """A function that starts ``manage.py qcluster`` for the server's settings; stopped at teardown."""
    holder: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        log = (server.var_dir / "qcluster.log").open("ab")
        try:
            process = subprocess.Popen(
                [sys.executable, "manage.py", "qcluster"],
                cwd=REPO_ROOT,
                env=server.env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            log.close()
        holder.append(process)
        return process

    yield start
    for process in holder:
        # Ctrl-C's path first (the cluster stops its own workers), then whatever is left of the group.
        process.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=15)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=15)


def test_an_op_enqueued_on_commit_is_run_by_a_real_cluster(
    server: ServerProcess, cluster: Callable[[], subprocess.Popen[bytes]]
) -> None:
    assert server.database is not None
    server.manage("migrate", "--noinput")
    op_id = server.manage("shell", "-c", RECORD_TURN).strip().splitlines()[-1]

    # Committed and handed to the broker, nothing has run it yet.
    assert op_status(server, op_id) == "pending"
    assert queued_messages(server) == 1

    process = cluster()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, (server.var_dir / "qcluster.log").read_text()
        if op_status(server, op_id) not in ("pending", "running") and queued_messages(server) == 0:
            break
        time.sleep(0.2)

    # Nothing but this cluster runs ops here, so the op's own record is the proof that it ran it:
    # done, with a completion time, on its first attempt, and the broker's message consumed.
    assert op_status(server, op_id) == "done", (server.var_dir / "qcluster.log").read_text()[-4000:]
    finished_at, attempts, last_error = server.database.query(
        "SELECT finished_at, attempts, last_error FROM journal_outboxop WHERE op_id = %s",
        [op_id_param(server, op_id)],
    )[0]
    assert finished_at is not None and attempts == 0 and last_error == ""
    assert queued_messages(server) == 0
    # A successful outbox run is recorded on the op only: the cluster keeps no django-q result for
    # it (saving one costs a prune over every kept result), so the task table stays empty.
    assert server.database.query("SELECT name FROM django_q_task WHERE func = %s", [OUTBOX_TASK]) == []
