"""Block means nothing writes, with a real server and its django-q2 cluster (issue 32).

After ``/internal/storage/startup/block`` a due post-turn extraction (outbox ops), a compression job,
the embedding backfill and every other schedule tick reach the cluster and wait: for 30 s not one row
of nekomem's tables changes, no file of the install's memory folder is written and the LLM is not
called. After ``…/continue`` they all run and the folder catches up.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.llm_server import TEST_API_KEY, Reply
from tests.support.server_process import ServerProcess, http_call, postgres_base_url, server_backend

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

CHARACTER = "小满"
TOKEN = "e2e-storage-block-secret"
# How long the work written while blocked may take to reach the cluster and be turned away.
REFUSED_WITHIN_SECONDS = 120.0

# Written while blocked, as a restore would (commands are not background writers): eleven turns
# with their post-turn ops (extraction: powerful memory is off), a compression the window is due
# for, three facts without vectors for the backfill; and every schedule made due.
BACKLOG = f"""
from django.utils import timezone
from django_q.models import Schedule
from nekomem.characters.models import Character
from recent.compression import compress_request
from recent.services import turn_record
from tests.facts.factories import FactFactory
for i in range(11):
    turn_record(name="{CHARACTER}", language="zh", messages=[
        {{"type": "human", "data": {{"content": f"第{{i}}轮：我下周要去杭州出差"}}}},
        {{"type": "ai", "data": {{"content": f"好的，第{{i}}轮"}}}},
    ])
character = Character.objects.get(name="{CHARACTER}")
job = compress_request(character_id=character.pk)
assert job is not None and job.status == "pending"
FactFactory.create_batch(3, character=character)
Schedule.objects.filter(name__startswith="nekomem:").update(next_run=timezone.now())
"""

# Every row of every table of nekomem (django-q2's own bookkeeping is not ours), as one digest each.
SNAPSHOT = """
import hashlib, json
from django.apps import apps
ours = ("nekomem", "recent", "facts", "reflections", "persona", "recall")
digest = {}
for model in apps.get_models():
    if not model.__module__.startswith(ours):
        continue
    rows = sorted(repr(row) for row in model._default_manager.order_by().values_list())
    digest[model._meta.label] = [len(rows), hashlib.sha256("\\n".join(rows).encode()).hexdigest()]
print(json.dumps(digest))
"""

# The work due while blocked and what the cluster has done with it: every pending job's and every
# schedule's task answered ``storage_blocked``, and the broker holds no task (the outbox ops' tasks keep
# no result, so their sign is that the cluster took them: on the ORM broker a task leaves the queue
# only once it has run, on Redis once a worker has taken it).
REFUSED = """
import ast, json
from django_q.brokers import get_broker
from django_q.models import Schedule, Task
from nekomem.journal.jobs import JOB_TASK
from nekomem.journal.models import Job
from nekomem.runtime.tasks import SCHEDULED_TICK
blocked = "storage_blocked"
schedules = Schedule.objects.filter(name__startswith="nekomem:")
broker = get_broker()
print(json.dumps({
    "due": {
        "jobs": sorted(Job.objects.filter(status="pending").values_list("pk", flat=True)),
        "ticks": sorted(ast.literal_eval(args) for args in schedules.values_list("args", flat=True)),
        "queued": 0,
    },
    "refused": {
        "jobs": sorted({t.args[0] for t in Task.objects.filter(func=JOB_TASK) if t.result == blocked}),
        "ticks": sorted({t.args[0] for t in Task.objects.filter(func=SCHEDULED_TICK) if t.result == blocked}),
        "queued": broker.queue_size() + (broker.lock_size() or 0),
    },
}))
"""

# What ran after continue, and the gate's answers to the ticks that reached the cluster meanwhile.
PROGRESS = """
import json
from django_q.models import Task
from nekomem.embeddings import configured_profile
from nekomem.embeddings.profiles import get_profile
from nekomem.journal.models import Job, OutboxOp
from nekomem.runtime.tasks import SCHEDULED_TICK
from recall.backfill import characters_needing_vectors
print(json.dumps({
    "ops": sorted(OutboxOp.objects.values_list("status", flat=True)),
    "compress": list(Job.objects.filter(kind__contains="compress").values_list("status", "attempts")),
    "need_vectors": characters_needing_vectors(model_id=get_profile(configured_profile()).model_id),
    "ticks": sorted({str(t.result) for t in Task.objects.filter(func=SCHEDULED_TICK)}),
}))
"""


def shell(server: ServerProcess, code: str) -> Any:
    return json.loads(server.manage("shell", "-c", code).strip().splitlines()[-1] or "null")


def internal(server: ServerProcess, path: str, body: dict[str, Any]) -> dict[str, Any]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        conn.request(
            "POST",
            path,
            body=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"},
        )
        response = conn.getresponse()
        assert response.status == 200, response.read()
        return json.loads(response.read())
    finally:
        conn.close()


def answer(body: Any) -> Reply:
    """A compression asks for a JSON memo; an extraction for a list of facts (none here)."""
    prompt = "".join(str(message.get("content")) for message in body.get("messages", []))
    if '"summary"' in prompt:
        return Reply(content=json.dumps({"summary": "主人下周要去杭州出差。"}, ensure_ascii=False))
    return Reply(content="[]")


def folder_files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file of the install's memory folder with its size and modification time."""
    return {
        p.relative_to(root).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".nekomem-scratch" not in p.parts
    }


@pytest.fixture
def install(tmp_path: Path) -> Path:
    """An install folder whose characters.json holds the character, and an empty memory/."""
    root = tmp_path / "neko"
    (root / "config").mkdir(parents=True)
    (root / "memory").mkdir()
    characters = {"主人": {"档案名": "阿凛"}, "猫娘": {CHARACTER: {"性格": "安静"}}, "当前猫娘": CHARACTER}
    (root / "config" / "characters.json").write_text(json.dumps(characters, ensure_ascii=False), "utf-8")
    return root


@pytest.fixture
def server(tmp_path: Path, llm_server, install: Path) -> Iterator[ServerProcess]:
    llm_server.fallback = answer
    llm_server.allow_unexpected = True
    with server_backend(
        tmp_path, postgres_url=postgres_base_url(), redis_base_url=os.environ.get("REDIS_URL") or None
    ) as server:
        server.extra_env.update(
            NEKOMEM_API_TOKEN=TOKEN,
            NEKOMEM_WORKERS="1",
            NEKOMEM_LLM_SUMMARY_BASE_URL=llm_server.base_url,
            NEKOMEM_LLM_SUMMARY_API_KEY=TEST_API_KEY,
            NEKOMEM_LLM_SUMMARY_MODEL="test-summary-model",
            NEKOMEM_NEKO_ROOT=str(install),
        )
        server.start()
        yield server


def test_while_blocked_no_background_work_writes_and_after_continue_it_all_runs(
    server, llm_server, install
) -> None:
    off = http_call(server.port, "POST", "/api/v1/powerful_memory_config", {"enabled": False})
    assert off.json() == {"enabled": False}
    assert internal(server, "/internal/storage/startup/block", {"reason": "restore"})["limited_mode"] is True
    shell(server, BACKLOG + "print('null')")
    before = shell(server, SNAPSHOT)
    assert before["journal.OutboxOp"][0] == 11 and before["facts.Fact"][0] == 3
    files_before = folder_files(install / "memory")

    # The ops, the job and the due ticks reach the cluster and are turned away by the gate.
    deadline = time.monotonic() + 60
    while "storage_blocked" not in shell(server, PROGRESS)["ticks"] and time.monotonic() < deadline:
        time.sleep(1)
    blocked = shell(server, PROGRESS)
    assert "storage_blocked" in blocked["ticks"], server.log_tail()
    # The job and every schedule's tick reach the cluster and are turned away, and the ops' tasks are
    # taken; only then can nothing having been written mean that the gate held.
    deadline = time.monotonic() + REFUSED_WITHIN_SECONDS
    while (work := shell(server, REFUSED))["refused"] != work["due"] and time.monotonic() < deadline:
        time.sleep(1)
    assert work["refused"] == work["due"], (work, server.log_tail())
    assert shell(server, SNAPSHOT) == before
    assert folder_files(install / "memory") == files_before
    assert llm_server.requests == []
    assert set(blocked["ops"]) == {"pending"} and blocked["compress"] == [["pending", 0]]
    assert blocked["need_vectors"]

    assert internal(server, "/internal/storage/startup/continue", {})["limited_mode"] is False
    deadline = time.monotonic() + 120
    progress = blocked
    while time.monotonic() < deadline:
        progress = shell(server, PROGRESS)
        if (
            set(progress["ops"]) == {"done"}
            and progress["compress"][0][0] == "done"
            and not progress["need_vectors"]
        ):
            break
        time.sleep(1)
    assert set(progress["ops"]) == {"done"}, server.log_tail()
    assert progress["compress"] == [["done", 0]], server.log_tail()
    assert progress["need_vectors"] == [], server.log_tail()
    assert llm_server.requests  # the extraction and the compression asked the LLM only now
    # The folder catches up: the turns written while blocked reach the window's file.
    recent = install / "memory" / CHARACTER / "recent.json"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (recent.is_file() and "杭州" in recent.read_text("utf-8")):
        time.sleep(1)
    assert recent.is_file() and "杭州" in recent.read_text("utf-8"), server.log_tail()
