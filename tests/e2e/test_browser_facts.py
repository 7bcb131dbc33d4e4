"""The facts and recent pages of the memory browser in a real headless Chromium, on a server started as
``make run`` starts it, holding memory imported from an original-layout directory."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.dataset import as_messages, conversation
from tests.support.server_process import ServerProcess, http_call, server_started

pytestmark = pytest.mark.slow  # no django_db: the server has its own database (see browser.py)

CHARACTER = "小雪"
# The first day of the Chinese MemoryBank chat: its user's words become facts, the day its raw log.
TURNS = [t for t in conversation("memorybank-cn") if t["session"] == 1]
FACT_TEXTS = [t["text"] for t in TURNS if t["role"] == "user"][:3]
FOUND_BY = "钢琴"  # a word of the second fact only


def fact_entry(text: str, created_at: str) -> dict[str, object]:
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    stamp = datetime.fromisoformat(created_at).strftime("%Y%m%d%H%M%S")
    return {
        "id": f"fact_{stamp}_{digest[:8]}",
        "text": text,
        "importance": 6,
        "entity": "master",
        "source": "user_observation",
        "tags": [],
        "hash": digest,
        "created_at": created_at,
        "event_when_raw": None,
        "event_start_at": created_at,
        "event_end_at": None,
        "schema_version": 2,
        "absorbed": False,
        "signal_processed": True,
    }


def write_memory_directory(root: Path) -> list[dict[str, object]]:
    """facts.json, time_indexed.db and recent.json of one character, as the original lays them out."""
    folder = root / CHARACTER
    folder.mkdir(parents=True)
    day = TURNS[0]["timestamp"]
    facts = [fact_entry(text, day) for text in FACT_TEXTS]
    (folder / "facts.json").write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")
    messages = as_messages(TURNS)
    db = sqlite3.connect(folder / "time_indexed.db")
    db.execute(
        "CREATE TABLE time_indexed_original (id INTEGER PRIMARY KEY, session_id TEXT, message TEXT,"
        " timestamp DATETIME)"
    )
    db.executemany(
        "INSERT INTO time_indexed_original (session_id, message, timestamp) VALUES (?, ?, ?)",
        [("session-1", json.dumps(m, ensure_ascii=False), day.replace("T", " ")) for m in messages],
    )
    db.commit()
    db.close()
    (folder / "recent.json").write_text(json.dumps(messages[:2], ensure_ascii=False), encoding="utf-8")
    return facts


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with server_started(tmp_path_factory.mktemp("browser-facts")) as server:
        yield server


@pytest.fixture(scope="module")
def imported(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, object]]:
    root = tmp_path_factory.mktemp("original-layout")
    facts = write_memory_directory(root)
    server.manage("import_memory", str(root))
    return facts


def archived(server: ServerProcess, fact_id: object) -> bool:
    answer = http_call(server.port, "GET", f"/api/v1/characters/{CHARACTER}/facts/{fact_id}/")
    assert answer.status == 200, answer.text
    return bool(answer.json()["archived"])


def test_an_imported_fact_is_found_archived_and_restored(server: ServerProcess, imported, page) -> None:
    wanted = imported[1]
    assert FOUND_BY in str(wanted["text"])
    page.goto(f"http://127.0.0.1:{server.port}/")
    page.get_by_role("link", name=CHARACTER).click()
    page.get_by_role("link", name="事实 Facts").first.click()
    page.locator("input[name=q]").fill(FOUND_BY)
    page.get_by_role("button", name="筛选 Filter").click()

    rows = page.locator("[data-testid=facts] tbody tr")
    expect(rows).to_have_count(1)  # waits for the filtered page, not the one being left
    row = page.locator(f"tr[data-fact-id='{wanted['id']}']")
    assert row.locator(".fact-text").inner_text() == wanted["text"]
    assert "活跃 Active" in row.locator("[data-testid=fact-status]").inner_text()

    row.get_by_role("button", name="归档 Archive").click()
    page.locator(".messages").get_by_text("已归档 Archived").wait_for()
    assert "已归档 Archived" in row.locator("[data-testid=fact-status]").inner_text()
    assert page.locator("input[name=q]").input_value() == FOUND_BY  # back on the same search
    assert archived(server, wanted["id"])

    row.get_by_role("button", name="恢复 Restore").click()
    page.locator(".messages").get_by_text("已恢复 Restored").wait_for()
    assert "活跃 Active" in row.locator("[data-testid=fact-status]").inner_text()
    assert not archived(server, wanted["id"])


def test_the_recent_page_shows_the_days_raw_log_and_guards_unsaved_edits(
    server: ServerProcess, imported, page
) -> None:
    page.goto(f"http://127.0.0.1:{server.port}/browse/{CHARACTER}/facts/")
    page.get_by_role("link", name="近期 Recent").first.click()

    raw = page.locator("[data-testid=raw-rows]")
    assert page.locator("input[name=day]").input_value() == TURNS[0]["timestamp"][:10]
    expect(raw.locator("tbody tr")).to_have_count(len(TURNS))
    assert TURNS[0]["text"] in raw.inner_text() and TURNS[-1]["text"] in raw.inner_text()

    first = page.locator("#messages textarea").first
    first.wait_for()
    assert first.input_value() == TURNS[0]["text"]
    first.fill("你好，我叫张曼婷，今天想聊聊画画。")
    page.get_by_role("link", name="事实 Facts").first.click()
    page.locator("#guard").get_by_role("button", name="取消 Cancel").click()
    assert "/recent/" in page.url and first.input_value() == "你好，我叫张曼婷，今天想聊聊画画。"

    page.locator("#save").click()
    page.wait_for_function("document.getElementById('save').disabled")
    window = http_call(server.port, "GET", f"/api/v1/characters/{CHARACTER}/recent/window/").json()
    assert window["messages"][0]["data"]["content"] == "你好，我叫张曼婷，今天想聊聊画画。"
    assert TURNS[0]["text"] in raw.inner_text()  # the raw log keeps what was said
