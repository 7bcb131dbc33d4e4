"""The memory browser: its page, the window read/replace API and the settings switches."""

from __future__ import annotations

import json

import pytest

from nekomem.runtime.switches import POWERFUL_MEMORY, RECENT_AUTO_REVIEW, switch_enabled
from recent.models import RawMessage, RecentMessage
from tests.support.dataset import conversation

pytestmark = pytest.mark.django_db

WINDOW = "/api/v1/characters/{}/recent/window/"


def put(client, name: str, body: dict):
    return client.put(
        WINDOW.format(name), data=json.dumps(body, ensure_ascii=False), content_type="application/json"
    )


@pytest.fixture
def stored(post_history):
    turns = conversation("memorybank-cn")[:4]
    for turn in turns:
        post_history("cache", "小天", ("human" if turn["role"] == "user" else "ai", turn["text"]))
    return turns


def test_the_page_renders_with_the_api_root(client):
    response = client.get("/memory_browser")
    assert response.status_code == 200
    html = response.content.decode()
    assert "猫娘记忆库" in html and 'const api = "/api/v1/"' in html


def test_read_then_replace_the_window(client, stored):
    window = client.get(WINDOW.format("小天")).json()
    assert [m["data"]["content"] for m in window["messages"]] == [t["text"] for t in stored]
    chat = [
        {"role": "system", "text": "先前对话的备忘录: 主人喜欢绘画"},
        {"role": "human", "text": "今天画了一幅画"},
    ]
    saved = put(client, "小天", {"chat": chat, "fingerprint": window["fingerprint"]})
    assert saved.status_code == 200 and saved.json()["need_refresh"] is True
    rows = list(RecentMessage.objects.filter(character__name="小天").order_by("position"))
    assert [(r.type, r.data["content"]) for r in rows] == [(m["role"], m["text"]) for m in chat]
    assert RawMessage.objects.filter(character__name="小天").count() == 4  # the raw log is never edited


def test_a_stale_fingerprint_is_409_and_keeps_the_newer_window(client, stored, post_history):
    window = client.get(WINDOW.format("小天")).json()
    post_history("cache", "小天", ("human", "又来了一句"))
    response = put(
        client, "小天", {"chat": [{"role": "human", "text": "覆盖"}], "fingerprint": window["fingerprint"]}
    )
    assert response.status_code == 409 and response.json()["error_code"] == "conflict"
    assert RecentMessage.objects.filter(character__name="小天").count() == 5


@pytest.mark.parametrize(
    "chat",
    [
        [{"role": "robot", "text": "x"}],
        [{"role": "human"}],
        [{"role": "human", "text": "猫" * 32_769}],
        "not a list",
    ],
)
def test_bad_edits_are_400_and_change_nothing(client, stored, chat):
    response = put(client, "小天", {"chat": chat})
    assert response.status_code == 400 and response.json()["status"] == "error"
    assert RecentMessage.objects.filter(character__name="小天").count() == 4


def test_unknown_character_is_404(client):
    assert client.get(WINDOW.format("nobody")).status_code == 404


@pytest.mark.parametrize(
    ("route", "switch"), [("review_config", RECENT_AUTO_REVIEW), ("powerful_memory_config", POWERFUL_MEMORY)]
)
def test_switches_default_on_and_can_be_turned_off(client, route, switch):
    assert client.get(f"/api/v1/{route}").json() == {"enabled": True}
    response = client.post(
        f"/api/v1/{route}", data=json.dumps({"enabled": False}), content_type="application/json"
    )
    assert response.json() == {"enabled": False}
    assert switch_enabled(switch) is False
    bad = client.post(
        f"/api/v1/{route}", data=json.dumps({"enabled": "maybe"}), content_type="application/json"
    )
    assert bad.status_code == 400 and switch_enabled(switch) is False
