"""Forgetting across real server processes (issue 34): two servers (one HTTP worker each) share one
database; both answer a query with a marker turn, so both hold it in their recall index and on disk.
The raw-log range is forgotten through A; B, asked at once, never returns it, and no byte of either
server's var/ holds it (nor any text of a saved index, loaded back)."""

from __future__ import annotations

import contextlib
import uuid
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.support.server_process import (
    ServerProcess,
    history_body,
    http_call,
    two_servers_one_database,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db]

CHARACTER = "小忘"


@pytest.fixture(scope="module")
def two_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    with two_servers_one_database(
        tmp_path_factory.mktemp("forgetting"), env={"NEKOMEM_WORKERS": "1"}
    ) as servers:
        yield servers


def found(server: ServerProcess, marker: str) -> list[str]:
    answer = http_call(server.port, "POST", f"/query_memory/{quote(CHARACTER)}", {"query": marker})
    assert answer.status == 200, answer.text
    return [row["text"] for row in answer.json()["results"] if marker in row["text"]]


def saved_texts(var_dir: Path) -> str:
    """Every byte under var/ (log files aside: they never carry memory text at INFO), with each saved
    index's compressed text blocks inflated, so a text inside a snapshot is seen too."""
    out: list[str] = []
    for path in var_dir.rglob("*"):
        if not path.is_file() or path.suffix == ".log":
            continue
        data = path.read_bytes()
        out.append(data.decode("utf-8", errors="replace"))
        if path.suffix == ".pickle":
            out.extend(_snapshot_blocks(data))
    return "\n".join(out)


def _snapshot_blocks(data: bytes) -> list[str]:
    """Every zlib stream in a saved index inflated: its texts are stored in compressed blocks."""
    texts = []
    at = data.find(b"x\x9c")
    while at != -1:
        with contextlib.suppress(zlib.error):
            texts.append(zlib.decompressobj().decompress(data[at:]).decode("utf-8", errors="replace"))
        at = data.find(b"x\x9c", at + 1)
    return texts


def test_a_forgotten_turn_is_gone_from_every_worker_and_every_file(two_servers) -> None:
    server_a, server_b = two_servers
    marker = f"qx{uuid.uuid4().hex[:12]}"
    sent = http_call(
        server_a.port,
        "POST",
        f"/cache/{quote(CHARACTER)}",
        history_body([{"type": "human", "data": {"content": f"今天的暗号是 {marker}"}}]),
    )
    assert sent.status == 200, sent.text
    assert found(server_a, marker) and found(server_b, marker)  # both indexes hold it
    assert marker in saved_texts(server_a.var_dir) + saved_texts(server_b.var_dir)

    now = datetime.now(UTC)
    window = {"start": (now - timedelta(hours=1)).isoformat(), "end": (now + timedelta(hours=1)).isoformat()}
    url = f"/api/v1/characters/{quote(CHARACTER)}/raw/forget/"
    preview = http_call(server_a.port, "POST", url, {**window, "preview": True})
    assert preview.status == 200 and marker in preview.text
    forgotten = http_call(server_a.port, "POST", url, window)
    assert forgotten.status == 200, forgotten.text
    assert forgotten.json()["removed"]["raw_turns"] >= 1

    for _ in range(3):  # B applies it at its next query, and every one after
        assert not found(server_b, marker)
        assert not found(server_a, marker)
    history = http_call(server_b.port, "GET", f"/get_recent_history/{quote(CHARACTER)}")
    assert marker not in history.text
    dialog = http_call(server_b.port, "GET", f"/new_dialog/{quote(CHARACTER)}")
    assert marker not in dialog.text
    for var_dir in (server_a.var_dir, server_b.var_dir):
        assert marker not in saved_texts(var_dir), var_dir
    assert not [
        row for row in server_a.database.query("SELECT message FROM recent_rawmessage") if marker in row[0]
    ]
