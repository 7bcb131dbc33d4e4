"""8 clients × 50 ``/cache`` turns on one character over real HTTP while ``/new_dialog`` keeps reading.

Nothing may be lost, duplicated or reordered, and every working context rendered during the burst
must show a consistent prefix of the final window (never half a turn, never a client's turns out of
its own order).
"""

from __future__ import annotations

import http.client
import json
import re
import threading
from collections import defaultdict
from collections.abc import Callable
from urllib.parse import quote, urlsplit

import pytest

from nekomem.journal.models import OutboxOp
from recent.models import RawMessage, RecentMessage

pytestmark = pytest.mark.django_db(transaction=True)

CHARACTER = "阿喵"
CLIENTS = 8
TURNS_PER_CLIENT = 50
MARKER = re.compile(r"T(\d+)S(\d+)([QA])")

Marker = tuple[int, int, str]  # (client, sequence, "Q" for the human line or "A" for the ai line)


def human_text(client: int, seq: int) -> str:
    return f"T{client}S{seq}Q 今天过得怎么样？"


def ai_text(client: int, seq: int) -> str:
    return f"T{client}S{seq}A 还不错，刚散完步。"


def marker(text: str) -> Marker:
    found = MARKER.search(text)
    assert found, text
    return int(found[1]), int(found[2]), found[3]


def markers_in(text: str) -> list[Marker]:
    return [(int(m[1]), int(m[2]), m[3]) for m in MARKER.finditer(text)]


def connect(url: str) -> Callable[[str, str, bytes | None], tuple[int, bytes]]:
    parts = urlsplit(url)

    def call(method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=60)
        try:
            headers = {"Content-Type": "application/json"} if body is not None else {}
            conn.request(method, quote(path, safe="/?=&"), body=body, headers=headers)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    return call


def expected_turn_order_holds(sequence: list[Marker]) -> None:
    """Turns come as (Q, A) pairs of one call, and each client's calls in its send order."""
    assert len(sequence) % 2 == 0, sequence[-3:]
    last_seq: dict[int, int] = defaultdict(lambda: -1)
    for i in range(0, len(sequence), 2):
        (c1, s1, k1), (c2, s2, k2) = sequence[i], sequence[i + 1]
        assert (c1, s1, k1, k2) == (c2, s2, "Q", "A"), sequence[i : i + 2]
        assert s1 == last_seq[c1] + 1, f"client {c1}: turn {s1} after {last_seq[c1]}"
        last_seq[c1] = s1


def test_parallel_cache_calls_lose_nothing_while_new_dialog_sees_consistent_prefixes(live_server) -> None:
    call = connect(live_server.url)
    start = threading.Barrier(CLIENTS + 1)
    writers_done = threading.Event()
    cache_results: list[tuple[int, int, int, bytes]] = []
    dialogs: list[tuple[int, str]] = []
    errors: list[BaseException] = []

    def writer(client: int) -> None:
        try:
            start.wait()
            for seq in range(TURNS_PER_CLIENT):
                messages = [
                    {"type": "human", "data": {"content": human_text(client, seq)}},
                    {"type": "ai", "data": {"content": ai_text(client, seq)}},
                ]
                body = {"input_history": json.dumps(messages, ensure_ascii=False), "language": "zh"}
                status, raw = call("POST", f"/cache/{CHARACTER}", json.dumps(body).encode())
                cache_results.append((client, seq, status, raw))
        except BaseException as exc:
            errors.append(exc)

    def reader() -> None:
        try:
            start.wait()
            while not writers_done.is_set():
                status, raw = call("GET", f"/new_dialog/{CHARACTER}?language=zh", None)
                dialogs.append((status, raw.decode("utf-8")))
        except BaseException as exc:
            errors.append(exc)

    writers = [threading.Thread(target=writer, args=(c,)) for c in range(CLIENTS)]
    reader_thread = threading.Thread(target=reader)
    for thread in [*writers, reader_thread]:
        thread.start()
    for thread in writers:
        thread.join(timeout=600)
    writers_done.set()
    reader_thread.join(timeout=120)
    assert not errors, errors
    assert not any(t.is_alive() for t in [*writers, reader_thread])

    # Every call was acknowledged.
    assert len(cache_results) == CLIENTS * TURNS_PER_CLIENT
    assert {(status, json.loads(raw)["status"]) for _c, _s, status, raw in cache_results} == {(200, "cached")}
    all_turns = {(c, s) for c in range(CLIENTS) for s in range(TURNS_PER_CLIENT)}

    # The recent window: 800 rows, pairs adjacent, each client's turns in its send order, none twice.
    window = list(RecentMessage.objects.filter(character__name=CHARACTER).order_by("position"))
    window_markers = [marker(m.data["content"]) for m in window]
    assert len(window) == 2 * len(all_turns)
    assert [m.type for m in window] == ["human", "ai"] * len(all_turns)
    expected_turn_order_holds(window_markers)
    assert {(c, s) for c, s, _k in window_markers} == all_turns
    positions = [m.position for m in window]
    assert positions == list(range(positions[0], positions[0] + len(window)))

    # The raw log: one session per call holding exactly its two messages, in the window's order.
    raw = list(RawMessage.objects.filter(character__name=CHARACTER).order_by("timestamp", "id"))
    assert len(raw) == len(window)
    raw_markers = [marker(json.loads(r.message)["data"]["content"]) for r in raw]
    assert raw_markers == window_markers
    sessions: dict[str, list[Marker]] = defaultdict(list)
    for row, mark in zip(raw, raw_markers, strict=True):
        sessions[row.session_id].append(mark)
    assert len(sessions) == len(all_turns)
    assert all(len(marks) == 2 and marks[0][:2] == marks[1][:2] for marks in sessions.values())

    # The outbox: one op per call, for that call's session and messages, run once to done.
    ops = list(OutboxOp.objects.filter(character__name=CHARACTER))
    assert len(ops) == len(all_turns)
    assert {op.payload["session_id"] for op in ops} == set(sessions)
    for op in ops:
        assert [marker(m["data"]["content"]) for m in op.payload["messages"]] == sessions[
            op.payload["session_id"]
        ]
    assert {op.status for op in ops} == {OutboxOp.Status.DONE}

    # Every working context seen during the burst is a prefix of the final window.
    assert dialogs, "the reader never got a /new_dialog answer"
    assert {status for status, _text in dialogs} == {200}
    for _status, text in dialogs:
        seen = markers_in(text)
        assert seen == window_markers[: len(seen)]
        expected_turn_order_holds(seen)
    status, final = call("GET", f"/new_dialog/{CHARACTER}?language=zh", None)
    assert status == 200
    assert markers_in(final.decode("utf-8")) == window_markers
