"""Status, recall playground and jobs in a real headless Chromium, against a server started as
``make run`` starts it, with no LLM provider configured."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from tests.support.server_process import ServerProcess, history_body, http_call

pytestmark = pytest.mark.slow  # no django_db: the server has its own database (see browser.py)

CHARACTER = "小天"
NO_PROVIDER = {f"NEKOMEM_LLM_SUMMARY_{key}": "" for key in ("BASE_URL", "MODEL", "API_KEY")}
STARTUP_LINE = "LLM: no provider configured for any tier (summary, correction, emotion)"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = ServerProcess(
        database=None, var_dir=tmp_path_factory.mktemp("browser-status") / "var", extra_env=NO_PROVIDER
    )
    server.start()
    try:
        yield server
    finally:
        server.stop()


def cache_turn(server: ServerProcess, *texts: str) -> None:
    messages = [
        {"type": "human" if i % 2 == 0 else "ai", "data": {"content": text}} for i, text in enumerate(texts)
    ]
    answer = http_call(server.port, "POST", f"/cache/{CHARACTER}", history_body(messages, "zh"))
    assert answer.json()["status"] == "cached", answer.text


def url(server: ServerProcess, path: str) -> str:
    return f"http://127.0.0.1:{server.port}{quote(path)}"


def test_the_front_door_says_llm_work_waits_without_a_provider(server: ServerProcess, page) -> None:
    cache_turn(server, "今天天气真好", "是呀")
    page.goto(url(server, "/"))
    panel = page.get_by_test_id("status-panel")
    waits = panel.get_by_test_id("llm-waits")
    assert "LLM work waits: no provider for the summary, correction, emotion tier(s)" in waits.inner_text()
    assert panel.get_by_test_id("status-storage").inner_text().endswith("正常 open")
    # The server said so once as it started, not once per worker.
    assert server.log_path.read_text().count(STARTUP_LINE) == 1


def test_a_cached_turn_comes_back_in_the_recall_playground_with_its_explanation(
    server: ServerProcess, page
) -> None:
    cache_turn(server, "我昨天在东京吃了一碗拉面", "听起来好好吃！")
    page.goto(url(server, f"/browse/{CHARACTER}/"))
    page.locator("nav.tabs").get_by_role("link", name="回忆 Recall").click()
    page.get_by_label("查询 Query").fill("东京拉面")
    page.get_by_role("button", name="回忆 Recall").click()
    first = page.get_by_test_id("recall-result").first
    assert first.get_by_test_id("recall-text").inner_text().startswith("我昨天在东京吃了一碗拉面")
    cells = first.locator("td").all_inner_texts()
    assert "raw turns" in cells
    assert re.fullmatch(r"#1 · \d+\.\d{4}", cells[4]), cells  # the first path's rank and score
    assert float(first.get_by_test_id("recall-fused").inner_text()) > 0
    assert "混合检索 Hybrid" in page.get_by_test_id("recall-mode").inner_text()


def test_a_dead_job_is_retried_from_the_jobs_page(server: ServerProcess, page) -> None:
    cache_turn(server, "记得提醒我喝水", "好的")
    job_id = server.manage(
        "shell",
        "-c",
        "from nekomem.characters.models import Character; from nekomem.journal.models import Job; "
        f"print(Job.objects.create(character=Character.objects.get(name='{CHARACTER}'), "
        "kind='recent.compress', status='dead', attempts=5, last_error='RuntimeError: upstream down').pk)",
    ).split()[-1]  # after the shell's own banner
    page.goto(url(server, f"/browse/{CHARACTER}/jobs/") + "?status=dead")
    row = page.get_by_test_id(f"job-{job_id}")
    assert row.get_by_test_id("last-error").inner_text() == "RuntimeError: upstream down"
    row.get_by_role("button", name="重试 Retry").click()
    expect(page.locator(".messages")).to_contain_text(f"已重试任务 Retried job #{job_id} (recent.compress)")
    expect(page.get_by_test_id(f"job-{job_id}")).to_have_count(0)  # no longer among the dead
    # The cluster runs it: the window needs no compressing, so it is done without any provider.
    deadline = time.monotonic() + 30
    while True:
        page.goto(url(server, f"/browse/{CHARACTER}/jobs/"))
        status = page.get_by_test_id(f"job-{job_id}").get_attribute("data-status")
        if status == "done" or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert status == "done"


# The longest name allowed (64 characters), ending in a run with no break opportunity.
LONG_NAME = "一个名字非常非常长的猫娘" * 3 + "W" * 28


def test_a_long_character_name_does_not_break_the_layout(server: ServerProcess, page) -> None:
    answer = http_call(
        server.port,
        "POST",
        f"/cache/{LONG_NAME}",
        history_body([{"type": "human", "data": {"content": "你好"}}], "zh"),
    )
    assert answer.json()["status"] == "cached", answer.text
    page.set_viewport_size({"width": 800, "height": 700})
    for path in (
        "/",
        f"/browse/{LONG_NAME}/",
        f"/browse/{LONG_NAME}/facts/",
        f"/browse/{LONG_NAME}/persona/",
    ):
        page.goto(url(server, path))
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, (path, overflow)
