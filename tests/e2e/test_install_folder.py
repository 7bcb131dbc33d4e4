"""A real server in install mode (``NEKOMEM_NEKO_ROOT``), started as ``make run`` starts it: the first
start takes in the install's memory folder once, turns reach ``recent.json`` and ``time_indexed.db``
within 10 s, a second start changes nothing, and a copy of the folder started as a second nekomem (the
original's cloud save: another machine, database and port) serves the same memory."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.server_process import (
    history_body,
    http_call,
    postgres_base_url,
    server_backend,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "neko_install_folder"
VIEW_DEADLINE_SECONDS = 10.0


def _wait_for(check: Callable[[], bool], *, seconds: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        if check():
            return time.monotonic() - started
        time.sleep(0.2)
    raise AssertionError(f"not within {seconds} s")


def _recent_texts(folder: Path) -> list[str]:
    try:
        messages = json.loads((folder / "recent.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [str(m["data"]["content"]) for m in messages]


def _raw_texts(folder: Path) -> list[str]:
    try:
        db = sqlite3.connect(f"file:{folder / 'time_indexed.db'}?mode=ro", uri=True)
        try:
            rows = db.execute("SELECT message FROM time_indexed_original ORDER BY timestamp, id").fetchall()
        finally:
            db.close()
    except sqlite3.Error:
        return []
    return [str(json.loads(m)["data"]["content"]) for (m,) in rows]


def _snapshot(memory: Path) -> dict[str, tuple[int, int]]:
    """Every memory file's size and mtime; the outbox is left out: a restart replays its pending ops
    (work the server does, not the migration), and a replay's attempt is written to it."""
    return {
        p.relative_to(memory).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in sorted(memory.rglob("*"))
        if p.is_file() and p.name != "outbox.ndjson"
    }


def _settled_snapshot(memory: Path) -> dict[str, tuple[int, int]]:
    """The snapshot once the writer has nothing left to write (two looks a pass apart agree)."""
    deadline = time.monotonic() + 30
    last = _snapshot(memory)
    while time.monotonic() < deadline:
        time.sleep(2.5)
        now = _snapshot(memory)
        if now == last:
            return now
        last = now
    raise AssertionError("the install folder kept changing for 30 s")


# The current time and the time since the last chat: the only lines two servers may render apart.
_CLOCK = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}:\d{2}|\d+\s*(秒|分钟|小时|天)")


def _last_pass_at(port: int) -> str | None:
    return http_call(port, "GET", "/api/v1/status/").json()["install"]["last_pass_at"]


def _wait_for_two_passes(port: int) -> None:
    """Until the folder writer has finished two more passes (``install.last_pass_at`` moved twice)."""
    seen = [_last_pass_at(port)]

    def moved_twice() -> bool:
        latest = _last_pass_at(port)
        if latest != seen[-1]:
            seen.append(latest)
        return len(seen) >= 3

    _wait_for(moved_twice, seconds=30)


def _dialog(port: int, name: str) -> list[str]:
    response = http_call(port, "GET", f"/new_dialog/{name}")
    assert response.status == 200, response.text
    return [line for line in response.text.splitlines() if not _CLOCK.search(line)]


def _recalled(port: int, name: str, query: str) -> list[str]:
    response = http_call(port, "POST", f"/query_memory/{name}", {"query": query})
    assert response.status == 200, response.text
    return [str(item.get("text", item)) for item in response.json().get("results", [])]


def test_install_folder_first_start_live_views_restart_and_cloud_save_round_trip(tmp_path: Path) -> None:
    root = tmp_path / "install" / "N.E.K.O"
    shutil.copytree(FIXTURE, root)
    memory = root / "memory"
    redis = os.environ.get("REDIS_URL")
    with server_backend(tmp_path / "a", postgres_url=postgres_base_url(), redis_base_url=redis) as server:
        server.extra_env["NEKOMEM_NEKO_ROOT"] = str(root)
        server.start(ready_timeout=120)

        # The first start took in both characters, once.
        status = http_call(server.port, "GET", "/api/v1/status/").json()["install"]
        assert status["migration"]["state"] == "done" and status["migration"]["done"] == 2, status
        assert "install migration: 2/2" in server.log_path.read_text(errors="replace")
        assert "阿凛在准备 JLPT N2 考试" in "\n".join(_recalled(server.port, "小天", "JLPT 考试"))

        # Turns through /cache and /settle reach recent.json and the raw log within 10 s.
        turn = [
            {"type": "human", "data": {"content": "周末我们去江边看烟花吧"}},
            {"type": "ai", "data": {"content": "好呀，我想看最大的那朵烟花！"}},
        ]
        cached = http_call(server.port, "POST", "/cache/小天", history_body(turn, "zh"))
        assert cached.status == 200 and cached.json()["status"] == "cached", cached.text
        settled = http_call(server.port, "POST", "/settle/小天", history_body([], "zh"))
        assert settled.status == 200, settled.text
        folder = memory / "小天"
        _wait_for(
            lambda: "好呀，我想看最大的那朵烟花！" in _recent_texts(folder), seconds=VIEW_DEADLINE_SECONDS
        )
        _wait_for(lambda: "周末我们去江边看烟花吧" in _raw_texts(folder), seconds=VIEW_DEADLINE_SECONDS)

        # A second start changes nothing in the folder (and takes nothing in).
        before = _settled_snapshot(memory)
        server.stop()
        server.start(ready_timeout=120)
        _wait_for_two_passes(server.port)
        assert _snapshot(memory) == before
        log = server.log_path.read_text(errors="replace").rsplit("memory server on http://", 1)[-1]
        assert "install migration" not in log and "took in" not in log
        here_dialog = _dialog(server.port, "小天")
        here_persona = http_call(server.port, "GET", "/get_persona/小天").json()
        here_recall = _recalled(server.port, "小天", "烟花")
        assert here_recall and any("烟花" in text for text in _dialog(server.port, "小天"))

        # Cloud save: the folder copied to another machine, started there as a second nekomem.
        copy = tmp_path / "other-machine" / "N.E.K.O"
        shutil.copytree(root, copy)
        with server_backend(tmp_path / "b", postgres_url=postgres_base_url(), redis_base_url=redis) as other:
            other.extra_env["NEKOMEM_NEKO_ROOT"] = str(copy)
            other.start(ready_timeout=120)
            assert other.port != server.port
            assert _dialog(other.port, "小天") == here_dialog
            assert http_call(other.port, "GET", "/get_persona/小天").json() == here_persona
            assert _recalled(other.port, "小天", "烟花") == here_recall
