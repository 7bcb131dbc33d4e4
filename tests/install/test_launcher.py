"""The original launcher and main server against a real ``manage.py serve`` started with the launcher's
environment inside an install folder (reference §12): they speak plain HTTP from native clients."""

from __future__ import annotations

import http.client
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.install.conftest import CSRF_TOKEN, FIXTURE, INSTANCE_ID
from tests.support.server_process import (
    HttpResult,
    ServerProcess,
    history_body,
    http_call,
    postgres_base_url,
    server_backend,
)

pytestmark = pytest.mark.slow  # the server has its own database


@pytest.fixture(scope="module")
def install(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, Path]]:
    tmp = tmp_path_factory.mktemp("launcher")
    root = tmp / "N.E.K.O"
    shutil.copytree(FIXTURE, root)
    with server_backend(
        tmp, postgres_url=postgres_base_url(), redis_base_url=os.environ.get("REDIS_URL") or None
    ) as server:
        server.extra_env.update(
            NEKOMEM_NEKO_ROOT=str(root),
            NEKO_INSTANCE_ID=INSTANCE_ID,
            NEKO_AUTOSTART_CSRF_TOKEN=CSRF_TOKEN,
            NEKOMEM_WORKERS="1",
        )
        server.start()
        yield server, root


def call(
    port: int, method: str, path: str, *, headers: dict[str, str] | None = None, body: Any = None
) -> HttpResult:
    """What the launcher's native client sends: Host 127.0.0.1:<port>, the headers given, nothing else."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        payload = b"" if body is None else json.dumps(body, ensure_ascii=False).encode()
        sent = {"Content-Type": "application/json", **(headers or {})}
        conn.request(method, quote(path, safe="/?=&"), body=payload, headers=sent)
        response = conn.getresponse()
        return HttpResult(response.status, response.read())
    finally:
        conn.close()


def test_health_answers_the_launchers_instance_id(install):
    server, _ = install
    health = http_call(server.port, "GET", "/health").json()
    assert health["instance_id"] == INSTANCE_ID and health["app"] == "N.E.K.O"


def test_the_launch_token_blocks_and_continues(install):
    server, _ = install
    token = {"X-CSRF-Token": CSRF_TOKEN}
    assert call(server.port, "POST", "/internal/storage/startup/block", headers=token).status == 200
    assert http_call(server.port, "GET", "/new_dialog/小天").status == 409
    assert call(server.port, "POST", "/internal/storage/startup/continue", headers=token).status == 200
    assert http_call(server.port, "GET", "/new_dialog/小天").status == 200


def test_a_wrong_token_is_403(install):
    server, _ = install
    answer = call(server.port, "POST", "/internal/storage/startup/block", headers={"X-CSRF-Token": "guess"})
    assert answer.status == 403 and answer.json()["error_code"] == "csrf_token_invalid"
    assert http_call(server.port, "GET", "/health").json()["limited_mode"] is False


def test_an_older_builds_bare_loopback_call_passes(install):
    server, _ = install
    assert call(server.port, "POST", "/internal/memory/reset_confirmed_at").status == 200
    assert call(server.port, "POST", "/reload").status == 200
    released = call(server.port, "POST", "/release_character/小白")
    assert released.status == 200 and released.json()["status"] == "success"


def test_a_browser_without_the_token_is_refused(install):
    server, _ = install
    browser = {"Origin": f"http://127.0.0.1:{server.port}", "Sec-Fetch-Site": "same-origin"}
    answer = call(server.port, "POST", "/internal/storage/startup/block", headers=browser)
    assert answer.status == 403
    assert http_call(server.port, "GET", "/health").json()["limited_mode"] is False


def test_a_card_edit_and_a_field_removal_show_in_the_next_new_dialog(install):
    server, root = install
    before = http_call(server.port, "GET", "/new_dialog/小天").text
    assert "性格: 温柔又有点傲娇" in before and "口头禅: 喵呜" in before
    path = root / "config/characters.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["猫娘"]["小天"]["性格"] = "开朗活泼"
    del data["猫娘"]["小天"]["口头禅"]
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    after = http_call(server.port, "GET", "/new_dialog/小天").text
    assert "性格: 开朗活泼" in after and "温柔又有点傲娇" not in after and "喵呜" not in after


def test_a_switch_flipped_in_the_file_takes_effect(install):
    server, root = install
    path = root / "config/core_config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**config, "powerful_memory_enabled": False}), encoding="utf-8")
    assert http_call(server.port, "GET", "/api/v1/powerful_memory_config").json() == {"enabled": False}
    answer = http_call(server.port, "POST", "/api/v1/powerful_memory_config", {"enabled": True})
    assert answer.json() == {"enabled": True}
    assert json.loads(path.read_text(encoding="utf-8")) == {**config, "powerful_memory_enabled": True}


def test_the_cache_turn_of_the_main_server_is_stored(install):
    server, _ = install
    messages = [{"type": "human", "data": {"content": "在吗"}}, {"type": "ai", "data": {"content": "在的"}}]
    answer = http_call(server.port, "POST", "/cache/小白", history_body(messages, "zh"))
    assert answer.json() == {"status": "cached", "count": 2}
