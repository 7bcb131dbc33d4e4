"""The reflections and persona pages in a real headless Chromium, against a server started like ``make run``.

The memory comes in the way a user brings an existing one: ``import_memory`` of an original-layout
directory (tests/fixtures/browser-layers). In the browser a pending reflection is confirmed and a
queued persona correction is merged by hand; the REST API then shows the new state.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.support.server_process import ServerProcess, http_call, server_started

pytestmark = pytest.mark.slow  # no django_db: the server has its own database (see browser.py)

CHARACTER = "小雪"
LAYOUT = Path(__file__).resolve().parents[1] / "fixtures" / "browser-layers"
REFLECTION = "ref_812c6f04139dd97c"
SOURCE_FACT = "fact_20261120093000_3f2a1b4c"
MERGED = "主人平时喝冰美式，冬天改喝热拿铁"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server on a fresh database of this run's kind (SQLite, or PostgreSQL under DATABASE_URL)."""
    with server_started(tmp_path_factory.mktemp("browser-layers"), memory={CHARACTER: LAYOUT}) as server:
        yield server


def api(server: ServerProcess, path: str) -> dict:
    response = http_call(server.port, "GET", f"/api/v1/characters/{CHARACTER}/{path}")
    assert response.status == 200, response.text
    return response.json()


def browse(server: ServerProcess, layer: str) -> str:
    return f"http://127.0.0.1:{server.port}/browse/{quote(CHARACTER)}/{layer}/"


def test_a_pending_reflection_confirmed_in_the_browser(server: ServerProcess, page) -> None:
    assert api(server, f"reflections/{REFLECTION}/")["status"] == "pending"
    page.goto(f"http://127.0.0.1:{server.port}/browse/{quote(CHARACTER)}/")
    page.get_by_role("link", name="反思 Reflections").first.click()
    row = page.locator(f'tr[data-reflection-id="{REFLECTION}"]')
    assert "主人最近在认真准备考试" in row.inner_text()
    source = row.get_by_role("link", name=SOURCE_FACT)
    assert source.get_attribute("href") == f"/browse/{quote(CHARACTER)}/facts/?q={SOURCE_FACT}"
    assert "主人说这周每天都去图书馆复习" in row.inner_text() and "ignored" in row.inner_text()
    row.get_by_role("button", name="确认 Confirm").click()
    page.locator(".messages li.success").wait_for()
    assert REFLECTION in page.locator(".messages").inner_text()
    assert page.url == browse(server, "reflections")
    assert row.get_by_test_id("reflection-status").inner_text() == "confirmed"
    confirmed = api(server, f"reflections/{REFLECTION}/")
    assert confirmed["status"] == "confirmed" and confirmed["confirmed_at"] is not None


def test_a_persona_correction_merged_by_hand_in_the_browser(server: ServerProcess, page) -> None:
    queued = api(server, "persona/corrections/")["results"]
    assert [c["new_text"] for c in queued] == ["主人冬天改喝热拿铁"]
    page.goto(browse(server, "persona"))
    row = page.locator(f'tr[data-correction-id="{queued[0]["id"]}"]')
    assert "主人喜欢喝冰美式" in row.inner_text()
    row.locator("textarea[name=text]").fill(MERGED)
    row.get_by_role("button", name="合并 Merge").click()
    page.locator(".messages li.success").wait_for()
    assert MERGED in page.locator(".messages").inner_text()
    page.get_by_test_id("no-corrections").wait_for()
    entry = page.locator('tr[data-entry-id="manual_20261115120000_a1b2c3d4"]')
    assert entry.get_by_test_id("entry-text").inner_text() == MERGED
    assert api(server, "persona/corrections/")["results"] == []
    entries = {e["id"]: e for e in api(server, "persona/entries/")["results"]}
    merged = entries["manual_20261115120000_a1b2c3d4"]
    assert merged["text"] == MERGED and merged["reinforcement"] == 1.5
    assert [v["text"] for v in merged["version_history"]] == ["主人喜欢喝冰美式"]
