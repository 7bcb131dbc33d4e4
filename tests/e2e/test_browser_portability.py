"""Rename a character and download its memory, in a real headless Chromium against a server started as
``make run`` starts it (its memory imported from the full original-layout fixture)."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.portability.layout import FIXTURE, NAME, file_contents
from tests.support.server_process import ServerProcess, http_call

pytestmark = pytest.mark.slow  # no django_db: the server has its own database (see browser.py)

NEW_NAME = "Mochi 喵"
REMEMBERED = ("提醒我订蛋糕", "阿凛和小天约好每天一起背单词")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = ServerProcess(database=None, var_dir=tmp_path_factory.mktemp("portability") / "var")
    server.manage("migrate", "--noinput")
    server.manage("import_memory", str(FIXTURE))
    server.start()
    try:
        yield server
    finally:
        server.stop()


def new_dialog(server: ServerProcess, name: str) -> str:
    return http_call(server.port, "GET", f"/new_dialog/{name}").text


def test_rename_on_the_overview_then_download_the_memory(server: ServerProcess, page, tmp_path: Path) -> None:
    before = new_dialog(server, NAME)
    assert all(text in before for text in REMEMBERED), before

    page.goto(f"http://127.0.0.1:{server.port}/browse/{NAME}/")
    form = page.get_by_test_id("rename-form")
    form.locator("input[name=new_name]").fill(NEW_NAME)
    form.get_by_role("button").click()
    page.wait_for_url(lambda url: unquote(url).endswith(f"/browse/{NEW_NAME}/"))
    assert page.get_by_test_id("character-name").inner_text() == NEW_NAME
    assert "Renamed to" in page.locator(".messages").inner_text()

    after = new_dialog(server, NEW_NAME)
    assert all(text in after for text in REMEMBERED), after
    assert new_dialog(server, NAME) == ""

    with page.expect_download() as download_info:
        page.get_by_test_id("export-link").click()
    archive = tmp_path / "memory.zip"
    download_info.value.save_as(archive)
    with zipfile.ZipFile(archive) as zipped:
        zipped.extractall(tmp_path / "out")
    exported = tmp_path / "out" / NEW_NAME
    for name in ("facts.json", "reflections.json", "persona.json", "recent.json", "time_indexed.db"):
        assert file_contents(exported, name) == file_contents(FIXTURE / NAME, name), name
    assert (
        json.loads((exported / "nekomem_character.json").read_text(encoding="utf-8"))["master_name"] == "阿凛"
    )
