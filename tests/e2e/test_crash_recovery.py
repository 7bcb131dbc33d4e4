"""SIGKILL the real server mid-burst, restart it the way ``make run`` does, and lose nothing.

The server runs on a database of its own (a SQLite file, or a fresh PostgreSQL database when this
run's ``DATABASE_URL`` is PostgreSQL) with the ORM broker, or Redis when ``REDIS_URL`` is set.
"""

from __future__ import annotations

import http.client
import json
import os
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.server_process import (
    ServerProcess,
    history_body,
    http_call,
    postgres_base_url,
    server_backend,
)

# django_db only makes pytest-django set up the test database, which the session's startup fixture
# (tests/conftest.py) needs; the server under test uses a database of its own.
pytestmark = [pytest.mark.slow, pytest.mark.django_db]

CHARACTER = "小满"
THREADS = 6
KILL_AFTER_OK = 60  # successful calls before the kill, so the burst is well under way
DONE_TIMEOUT = 60.0


@dataclass
class Call:
    thread: int
    seq: int
    outcome: str  # "ok", "failed" (connection error), or "status <code> <body>"

    @property
    def human(self) -> str:
        return f"crash t{self.thread} s{self.seq} 今天的天气怎么样？"

    @property
    def ai(self) -> str:
        return f"crash t{self.thread} s{self.seq} 晴天，适合出去走走。"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    with server_backend(
        tmp_path, postgres_url=postgres_base_url(), redis_base_url=os.environ.get("REDIS_URL") or None
    ) as server:
        yield server


def burst_then_kill(server: ServerProcess) -> list[Call]:
    """Several threads send distinct turns back to back; the process group dies mid-burst."""
    calls: list[Call] = []
    lock = threading.Lock()
    enough = threading.Event()

    def client(thread: int) -> None:
        seq = 0
        while True:
            call = Call(thread, seq, "failed")
            messages = [
                {"type": "human", "data": {"content": call.human}},
                {"type": "ai", "data": {"content": call.ai}},
            ]
            try:
                result = http_call(
                    server.port, "POST", f"/cache/{CHARACTER}", history_body(messages, "zh"), timeout=20
                )
                ok = result.status == 200 and result.json() == {"status": "cached", "count": 2}
                call.outcome = "ok" if ok else f"status {result.status} {result.body[:200]!r}"
            except (OSError, http.client.HTTPException):
                call.outcome = "failed"
            except Exception as exc:  # a bug in the client itself: report it, do not hang
                call.outcome = f"client error {exc!r}"
            with lock:
                calls.append(call)
                if (
                    call.outcome not in ("ok", "failed")
                    or sum(c.outcome == "ok" for c in calls) >= KILL_AFTER_OK
                ):
                    enough.set()
            if call.outcome != "ok":
                return  # the server is gone (or misbehaved): stop this client
            seq += 1

    threads = [threading.Thread(target=client, args=(t,), daemon=True) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    enough.wait(timeout=120)
    server.kill()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    return calls


def wait_until_ops_settled(server: ServerProcess) -> dict[str, int]:
    """Poll the database (bounded) until no op of the character is pending or running; return status
    counts."""
    assert server.database is not None
    deadline = time.monotonic() + DONE_TIMEOUT
    counts: dict[str, int] = {}
    while time.monotonic() < deadline:
        rows = server.database.query(
            "SELECT o.status, COUNT(*) FROM journal_outboxop o "
            "JOIN characters_character c ON c.id = o.character_id WHERE c.name = %s GROUP BY o.status",
            [CHARACTER],
        )
        counts = {status: count for status, count in rows}
        if not counts.get("pending") and not counts.get("running"):
            return counts
        time.sleep(0.25)
    return counts


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


@dataclass
class Store:
    raw_sessions: dict[str, list[str]]  # content -> session ids of its raw rows
    window_positions: dict[str, list[int]]  # content -> positions in the recent window
    ops: dict[str, list[tuple[str, str, list[str]]]]  # session id -> (op id, status, message contents)
    op_contents: dict[str, int]  # content -> how many ops carry it

    @classmethod
    def read(cls, server: ServerProcess) -> Store:
        db = server.database
        assert db is not None
        (character_id,) = db.query("SELECT id FROM characters_character WHERE name = %s", [CHARACTER])[0]
        raw_sessions: dict[str, list[str]] = defaultdict(list)
        for session_id, message in db.query(
            "SELECT session_id, message FROM recent_rawmessage WHERE character_id = %s ORDER BY id",
            [character_id],
        ):
            raw_sessions[json.loads(message)["data"]["content"]].append(session_id)
        window_positions: dict[str, list[int]] = defaultdict(list)
        for position, data in db.query(
            "SELECT position, data FROM recent_recentmessage WHERE character_id = %s ORDER BY position",
            [character_id],
        ):
            window_positions[_json(data)["content"]].append(position)
        ops: dict[str, list[tuple[str, str, list[str]]]] = defaultdict(list)
        op_contents: dict[str, int] = defaultdict(int)
        for op_id, status, payload in db.query(
            "SELECT op_id, status, payload FROM journal_outboxop WHERE character_id = %s", [character_id]
        ):
            payload = _json(payload)
            contents = [m["data"]["content"] for m in payload["messages"]]
            ops[payload["session_id"]].append((str(op_id), status, contents))
            for content in contents:
                op_contents[content] += 1
        return cls(dict(raw_sessions), dict(window_positions), dict(ops), dict(op_contents))

    def turn_state(self, call: Call) -> str:
        """ "complete", "absent", or a description of what is half there."""
        human_sessions = self.raw_sessions.get(call.human, [])
        ai_sessions = self.raw_sessions.get(call.ai, [])
        human_positions = self.window_positions.get(call.human, [])
        ai_positions = self.window_positions.get(call.ai, [])
        op_refs = self.op_contents.get(call.human, 0) + self.op_contents.get(call.ai, 0)
        if not (human_sessions or ai_sessions or human_positions or ai_positions or op_refs):
            return "absent"
        problems = []
        if len(human_sessions) != 1 or ai_sessions != human_sessions:
            problems.append(f"raw sessions {human_sessions} / {ai_sessions}")
        if len(human_positions) != 1 or len(ai_positions) != 1 or ai_positions[0] != human_positions[0] + 1:
            problems.append(f"window positions {human_positions} / {ai_positions}")
        ops = self.ops.get(human_sessions[0], []) if human_sessions else []
        if len(ops) != 1 or op_refs != 2:
            problems.append(f"{len(ops)} ops for its session, {op_refs} op references")
        elif ops[0][1] != "done" or ops[0][2] != [call.human, call.ai]:
            problems.append(f"op {ops[0]}")
        return "complete" if not problems else "; ".join(problems)


def test_sigkill_mid_burst_loses_no_acknowledged_turn_and_leaves_no_half_turn(server: ServerProcess) -> None:
    server.start()
    calls = burst_then_kill(server)

    acknowledged = [c for c in calls if c.outcome == "ok"]
    cut_off = [c for c in calls if c.outcome == "failed"]
    misbehaved = [c for c in calls if c.outcome not in ("ok", "failed")]
    assert misbehaved == [], f"only a dead server may fail a call: {misbehaved[:3]}"
    assert len(acknowledged) >= KILL_AFTER_OK, server.log_tail()

    server.start()  # the same way again: prepare (migrate, setup_schedules, prestart), serve
    statuses = wait_until_ops_settled(server)
    assert set(statuses) == {"done"}, f"ops not all done after restart: {statuses}\n{server.log_tail()}"
    new_dialog = http_call(server.port, "GET", f"/new_dialog/{CHARACTER}").text
    server.stop()

    store = Store.read(server)
    for call in acknowledged:
        assert store.turn_state(call) == "complete", (call, store.turn_state(call))
        assert call.human in new_dialog and call.ai in new_dialog
    for call in cut_off:
        assert store.turn_state(call) in ("complete", "absent"), (call, store.turn_state(call))

    # Nothing else is there: every stored row belongs to one of the calls, each op to one session.
    complete = [c for c in calls if store.turn_state(c) == "complete"]
    expected_contents = {text for c in complete for text in (c.human, c.ai)}
    assert set(store.raw_sessions) == expected_contents
    assert set(store.window_positions) == expected_contents
    assert sum(len(ops) for ops in store.ops.values()) == len(complete)

    # Each client's turns stand in the window in the order it sent them.
    for thread in range(THREADS):
        positions = [store.window_positions[c.human][0] for c in complete if c.thread == thread]
        assert positions == sorted(positions)
