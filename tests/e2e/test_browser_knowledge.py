"""The Knowledge page in a real headless Chromium, against a server started as ``make run`` starts it:
upload the fixture pack, read the preview, import it, disable an entry, and ask the query box."""

from __future__ import annotations

import http.client
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.server_process import ServerProcess, server_started

pytestmark = pytest.mark.slow  # no django_db: the server has its own database (see browser.py)

PACK = Path(__file__).resolve().parents[1] / "fixtures" / "knowledge" / "browser-pack.json"
SCREENSHOT_DIR = Path(os.environ.get("NEKOMEM_SCREENSHOT_DIR", "var/screenshots"))
IMPORT_TIMEOUT = 60.0
TOKEN = "e2e-knowledge-token"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    # NEKOMEM_API_TOKEN: the internal routes' shared secret
    with server_started(
        tmp_path_factory.mktemp("browser-knowledge"), env={"NEKOMEM_API_TOKEN": TOKEN}
    ) as server:
        yield server


def internal(server: ServerProcess, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    """What the main server gets from ``/internal/knowledge/*`` (the routes take the shared secret)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        conn.request(
            method,
            path,
            body=json.dumps(body, ensure_ascii=False).encode() if body is not None else None,
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"},
        )
        answer = conn.getresponse()
        assert answer.status == 200, answer.read()
        return json.loads(answer.read())
    finally:
        conn.close()


def url(server: ServerProcess, path: str) -> str:
    return f"http://127.0.0.1:{server.port}{path}"


def wait_for_pack(server: ServerProcess, pack_id: str) -> None:
    """Until the import job switched the pack in (the server's own answer, not a guess of time)."""
    deadline = time.monotonic() + IMPORT_TIMEOUT
    while time.monotonic() < deadline:
        packs = internal(server, "GET", "/internal/knowledge/packs")["packs"]
        if any(pack["pack_id"] == pack_id for pack in packs):
            return
        jobs = internal(server, "GET", "/internal/knowledge/packs/jobs")["jobs"]
        assert not any(job["state"] in ("failed", "cancelled") for job in jobs), jobs
        time.sleep(0.2)
    raise AssertionError(f"{pack_id} was not imported within {IMPORT_TIMEOUT} s:\n{server.log_tail()}")


def test_a_pack_is_previewed_imported_disabled_in_part_and_queried(server: ServerProcess, page) -> None:
    page.goto(url(server, "/"))
    page.get_by_test_id("site-page-knowledge").click()
    page.wait_for_url("**/knowledge/")

    # The preview, before anything is stored.
    page.get_by_test_id("pack-file").set_input_files(str(PACK))
    preview = page.get_by_test_id("pack-preview-ok")
    assert preview.get_by_test_id("preview-pack-id").inner_text() == "neko-memes"
    assert preview.get_by_test_id("preview-entry-count").inner_text() == "3"
    assert preview.get_by_test_id("preview-added").locator("li").all_inner_texts() == [
        "猫猫拳",
        "Loaf mode",
        "呼噜声",
    ]
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT_DIR / "knowledge-preview.png"), full_page=True)
    assert internal(server, "GET", "/internal/knowledge/packs")["packs"] == []

    # A broken file says why, in the language chosen on the page.
    page.get_by_test_id("knowledge-language").locator("select").select_option("ja")
    page.wait_for_url("**lang=ja**")
    page.get_by_test_id("pack-file").set_input_files(
        files=[{"name": "not-a-pack.json", "mimeType": "application/json", "buffer": b'{"schema_version": 1'}]
    )
    assert (
        page.get_by_test_id("pack-refused-reason").inner_text()
        == "ファイルが正しい UTF-8 の JSON ではありません。"
    )
    assert page.get_by_test_id("pack-import-button").is_disabled()
    page.screenshot(path=str(SCREENSHOT_DIR / "knowledge-refused.png"))

    # Import.
    page.get_by_test_id("pack-file").set_input_files(str(PACK))
    page.get_by_test_id("pack-preview-ok").wait_for()
    page.get_by_test_id("pack-import-button").click()
    page.locator('[data-testid="knowledge-job"]').first.wait_for()  # the page after the import's redirect
    wait_for_pack(server, "neko-memes")
    page.reload()
    row = page.locator('[data-testid="knowledge-pack"][data-pack-id="neko-memes"]')
    assert row.get_by_test_id("pack-entries").inner_text().startswith("3")

    # Disable one entry: it stays listed, marked, and the chat never gets it.
    entry = page.locator('[data-testid="knowledge-entry"][data-title="呼噜声"]')
    entry.get_by_test_id("entry-toggle").click()
    entry.get_by_test_id("entry-disabled").wait_for()  # the page after the switch's redirect
    entries = internal(server, "GET", "/internal/knowledge/entries?pack_id=neko-memes")["items"]
    assert {item["title"]: item["disabled"] for item in entries} == {
        "猫猫拳": False,
        "Loaf mode": False,
        "呼噜声": True,
    }

    # The query box shows the block the chat would get.
    form = page.get_by_test_id("knowledge-query-form")
    form.locator("textarea").fill("猫猫拳是什么")
    form.get_by_role("button", name="查询 Ask").click()
    context = page.get_by_test_id("knowledge-context")
    text = context.inner_text()
    wire = internal(
        server,
        "POST",
        "/internal/knowledge/query",
        {"query": "猫猫拳是什么", "limit": 3, "budget_ms": 2000, "language": "ja"},
    )
    assert wire["result"] == "matched"
    assert text == wire["context"]
    assert "[猫猫拳]" in text and "呼噜声" not in text
    first = page.get_by_test_id("knowledge-query-hit").first
    assert "猫猫拳" in first.inner_text() and "#1" in first.inner_text()
    page.screenshot(path=str(SCREENSHOT_DIR / "knowledge-page.png"), full_page=True)

    # Remove asks first; declined, nothing happens; accepted, the pack is gone.
    remove = page.locator('[data-testid="knowledge-pack"][data-pack-id="neko-memes"]').get_by_role(
        "button", name="移除 Remove"
    )
    page.once("dialog", lambda dialog: dialog.dismiss())
    remove.click()
    assert internal(server, "GET", "/internal/knowledge/packs")["packs"] != []
    page.once("dialog", lambda dialog: dialog.accept())
    remove.click()
    page.get_by_text("还没有知识包").wait_for()
    assert page.locator('[data-testid="knowledge-pack"]').count() == 0
    assert internal(server, "GET", "/internal/knowledge/packs")["packs"] == []
