"""The memory browser's recent pages: the old single page, the layer page under /browse/<name>/recent/
(the window editor and the raw log by day), the window read/replace API and the settings switches."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from nekomem.characters.models import Character
from nekomem.runtime.switches import POWERFUL_MEMORY, RECENT_AUTO_REVIEW, switch_enabled
from recent.browser import RAW_ROWS_PER_PAGE
from recent.models import RawMessage, RecentMessage
from recent.services import raw_log_append
from tests.characters.factories import CharacterFactory
from tests.recent.factories import RecentMessageFactory
from tests.support.dataset import conversation
from tests.support.pages import front_door_row

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


# --- /browse/<name>/recent/: the window editor and the raw log by day ---------------------------------

RECENT_PAGE = "/browse/小天/recent/"
DAY_ONE = timezone.make_aware(datetime(2024, 5, 1, 9, 30))
DAY_TWO = timezone.make_aware(datetime(2024, 5, 3, 21, 15))


def log(character: Character, at: datetime, *texts: str) -> None:
    """One call's worth of raw-log rows at ``at``, human and ai in turn."""
    messages = [{"type": ("human", "ai")[i % 2], "data": {"content": text}} for i, text in enumerate(texts)]
    raw_log_append(character_id=character.pk, messages=messages, timestamp=at)


@pytest.fixture
def logged() -> Character:
    character = CharacterFactory.create(name="小天")
    log(character, DAY_ONE, "今天去公园散步了", "听起来很惬意呢")
    log(character, DAY_TWO, "晚上下雨了", "记得带伞哦")
    return character


def recent_page(client, **params: str) -> str:
    answer = client.get(RECENT_PAGE, params)
    assert answer.status_code == 200
    return answer.content.decode()


def test_the_recent_page_carries_the_shared_editor_for_this_character(client, logged):
    RecentMessageFactory.create(character=logged, data={"content": "窗口里的一句"})
    body = recent_page(client)
    assert "/static/recent/window_editor.js" in body and 'createWindowEditor("/api/v1/")' in body
    assert 'id="messages"' in body and 'id="save"' in body and 'id="guard"' in body
    named = re.search(r'<script id="character-name" type="application/json">(.*?)</script>', body)
    assert named and json.loads(named.group(1)) == "小天"
    assert "（1 条）" in body and "近期 Recent" in body
    # The old single page uses the same script, not a copy of it.
    old = client.get("/memory_browser").content.decode()
    assert "/static/recent/window_editor.js" in old and "function messageRow" not in old


def test_the_raw_log_opens_on_its_last_day_and_steps_between_days(client, logged):
    body = recent_page(client)
    assert "晚上下雨了" in body and "记得带伞哦" in body and "今天去公园散步了" not in body
    assert 'value="2024-05-03"' in body and "2024-05-01" in body and 'data-testid="next-day"' not in body
    earlier = recent_page(client, day="2024-05-01")
    assert "今天去公园散步了" in earlier and "晚上下雨了" not in earlier
    assert "09:30:00" in earlier and 'data-testid="next-day"' in earlier and "2024-05-03" in earlier
    empty = recent_page(client, day="2024-05-02")
    assert "Nothing logged" in empty and "散步" not in empty.split('data-testid="raw-log"')[1]


def test_search_in_one_day_or_in_all_days(client, logged):
    assert "晚上下雨了" not in recent_page(client, day="2024-05-01", q="下雨")
    everywhere = recent_page(client, day="2024-05-01", q="下雨", all="1")
    assert "晚上下雨了" in everywhere and "今天去公园散步了" not in everywhere
    assert "2024-05-03 21:15:00" in everywhere


def test_search_finds_an_imported_row_stored_ascii_escaped(client, logged):
    message = json.dumps({"type": "human", "data": {"content": "我想吃草莓蛋糕"}})  # \\u escapes
    RawMessage.objects.create(character=logged, session_id="imported", message=message, timestamp=DAY_ONE)
    body = recent_page(client, q="草莓", all="1")
    assert "我想吃草莓蛋糕" in body and "1 条 rows" in body


def test_a_busy_day_comes_in_pages_that_keep_the_day(client, logged):
    for minute in range(RAW_ROWS_PER_PAGE + 5):
        log(logged, DAY_ONE + timedelta(minutes=minute + 1), f"第{minute:03d}句")
    first = recent_page(client, day="2024-05-01")
    # The day's two earlier rows come first, so page one ends two lines short of a full page.
    assert "第000句" in first and f"第{RAW_ROWS_PER_PAGE - 3:03d}句" in first
    assert f"第{RAW_ROWS_PER_PAGE - 2:03d}句" not in first
    assert "?day=2024-05-01&amp;page=2" in first
    second = recent_page(client, day="2024-05-01", page="2")
    assert f"第{RAW_ROWS_PER_PAGE + 4:03d}句" in second and "第000句" not in second


def test_a_bad_day_is_named_and_the_last_day_is_shown(client, logged):
    body = recent_page(client, day="2024-13-45")
    assert "Invalid date" in body and "晚上下雨了" in body


def test_the_recent_page_of_an_unknown_character_is_404(client):
    assert client.get("/browse/nobody/recent/").status_code == 404


def test_the_front_door_counts_the_rows_of_the_recent_window(client, logged):
    for _ in range(3):
        RecentMessageFactory.create(character=logged)
    assert front_door_row(client, "小天")["近期 Recent"] == "3"
