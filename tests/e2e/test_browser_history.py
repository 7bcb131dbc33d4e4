"""The memory browser's history in a real headless Chromium (issue 49): a row's versions as a diff, a
restore refused after a person's edit and then confirmed, and the timeline's undo of a whole import."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.test_browser_facts import fact_entry
from tests.support.server_process import ServerProcess, http_call, server_started

pytestmark = pytest.mark.slow  # no django_db: the server has its own database (see browser.py)

CHARACTER = "小史"
TEXTS = ["主人喜欢弹钢琴", "主人养了一只橘猫", "主人在学日语"]
API = f"/api/v1/characters/{CHARACTER}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with server_started(tmp_path_factory.mktemp("browser-history")) as server:
        yield server


@pytest.fixture(scope="module")
def imported(server: ServerProcess, tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, object]]:
    root: Path = tmp_path_factory.mktemp("original-layout")
    (root / CHARACTER).mkdir()
    facts = [fact_entry(text, "2024-05-01T12:00:00") for text in TEXTS]
    (root / CHARACTER / "facts.json").write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")
    server.manage("import_memory", str(root))
    return facts


def fact(server: ServerProcess, fact_id: object) -> dict[str, object]:
    answer = http_call(server.port, "GET", f"{API}/facts/{fact_id}/")
    assert answer.status == 200, answer.text
    return answer.json()


def test_a_rows_history_restores_and_the_timeline_undoes_the_import(
    server: ServerProcess, imported, page
) -> None:
    piano = imported[0]["id"]
    edited = http_call(server.port, "PATCH", f"{API}/facts/{piano}/", {"text": "主人讨厌弹钢琴"})
    assert edited.status == 200, edited.text

    page.set_extra_http_headers({"accept-language": "en"})  # the messages read below are the English ones
    page.goto(f"http://127.0.0.1:{server.port}/browse/{CHARACTER}/facts/")
    page.locator(f"tr[data-fact-id='{piano}'] [data-testid=row-history]").click()
    versions = page.locator("[data-testid=versions]")
    assert "<del>" not in versions.inner_text()  # the diff is rendered, not escaped
    assert "主人喜欢弹钢琴" in versions.locator("del").first.inner_text()
    assert "主人讨厌弹钢琴" in versions.locator("ins").first.inner_text()
    assert page.locator("[data-testid=version-2]").get_attribute("data-cause") == "rest"

    page.locator("[data-testid=restore-1]").click()  # a person edited it since: refused first
    page.locator(".messages").get_by_text("Changed by hand").wait_for()
    assert fact(server, piano)["text"] == "主人讨厌弹钢琴"
    page.locator("[data-testid=restore-force-1]").click()
    page.locator(".messages").get_by_text("Restored version 1").wait_for()
    assert fact(server, piano)["text"] == "主人喜欢弹钢琴"

    page.get_by_role("link", name="历史 History").first.click()
    page.locator("select[name=cause]").select_option("import")
    page.locator("[data-testid=filter]").click()
    rows = page.locator("[data-testid=changes] tbody tr")
    expect(rows).to_have_count(len(TEXTS))
    rows.first.locator("[data-testid=undo-source]").click()
    page.locator(".messages").get_by_text("Undid").wait_for()
    # Every row the import made is archived, except the one restored since, which is left as it is.
    assert [fact(server, f["id"])["archived"] for f in imported] == [False, True, True]
    assert piano in page.locator(".messages").inner_text()
    # The same page in another of the eight locales, by the page's own choice.
    page.goto(f"http://127.0.0.1:{server.port}/browse/{CHARACTER}/history/?lang=ja")
    assert page.locator("[data-testid=filter]").inner_text() == "絞り込む"
