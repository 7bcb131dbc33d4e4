"""Group-chat subjects in the memory browser, in a real headless Chromium against a server started like
``make run`` (issue 34): what the QQ plugin stored through ``scoped_facts`` stays out of the private view,
is found by choosing its subject in the filter, edited there, and forgotten as a whole with the counts."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from tests.support.server_process import ServerProcess, http_call, server_started

pytestmark = pytest.mark.slow  # no django_db: the server has its own database

CHARACTER = "小雪"
ALICE = {"subject_kind": "group_participant", "subject_id": "qq:7788:1001"}
ALICE_KEY = "group_participant:qq:7788:1001"
TOKEN = "e2e-subjects-token"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    # NEKOMEM_API_TOKEN: the internal routes' shared secret
    with server_started(
        tmp_path_factory.mktemp("browser-subjects"), env={"NEKOMEM_API_TOKEN": TOKEN}
    ) as server:
        body = {"subject": ALICE, "facts": [{"text": "爱丽丝喜欢草莓蛋糕"}], "display_name": "爱丽丝"}
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        conn.request(
            "POST",
            quote(f"/internal/memory/{CHARACTER}/scoped_facts"),
            body=json.dumps(body, ensure_ascii=False).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"},
        )
        stored = conn.getresponse()
        assert stored.status == 200, stored.read()
        conn.close()
        yield server


def facts_page(server: ServerProcess) -> str:
    return f"http://127.0.0.1:{server.port}/browse/{quote(CHARACTER)}/facts/"


def test_a_subject_is_filtered_edited_and_forgotten_in_the_browser(server: ServerProcess, page) -> None:
    page.goto(facts_page(server))
    assert "爱丽丝喜欢草莓蛋糕" not in page.content()  # the private view is the default

    page.get_by_test_id("subject-filter").select_option(ALICE_KEY)
    page.get_by_role("button", name="筛选 Filter").click()
    row = page.locator("[data-testid=facts] tbody tr")
    expect(row).to_have_count(1)
    assert row.locator(".fact-text").inner_text() == "爱丽丝喜欢草莓蛋糕"
    assert row.get_by_test_id("row-subject").inner_text() == "@ 爱丽丝"
    assert "爱丽丝" in page.get_by_test_id("subject-panel").inner_text()

    row.get_by_text("编辑 Edit").click()
    row.locator("textarea[name=text]").fill("爱丽丝喜欢抹茶蛋糕")
    row.get_by_role("button", name="保存 Save").click()
    page.locator(".messages").get_by_text("已保存 Saved").wait_for()
    assert page.get_by_test_id("subject-filter").input_value() == ALICE_KEY  # back on the same view
    assert row.locator(".fact-text").inner_text() == "爱丽丝喜欢抹茶蛋糕"

    page.on("dialog", lambda dialog: dialog.accept())
    page.get_by_test_id("subject-forget").click()
    said = page.locator(".messages li.success")
    said.wait_for()
    assert ALICE_KEY in said.inner_text() and "facts 1" in said.inner_text()
    assert page.get_by_test_id("subject-filter").input_value() == ""
    options = page.get_by_test_id("subject-filter").locator("option").all_inner_texts()
    assert not [o for o in options if "爱丽丝" in o]
    answer = http_call(
        server.port, "POST", f"/query_memory/{CHARACTER}", {"query": "抹茶蛋糕", "subjects": [ALICE_KEY]}
    )
    assert answer.status == 200 and answer.json()["results"] == []
