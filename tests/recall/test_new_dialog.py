from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from recent.models import RawMessage
from tests.characters.factories import CharacterFactory
from tests.support.dataset import as_messages, conversation

pytestmark = pytest.mark.django_db

INNER = re.compile(
    r"^现在时间是\d{4}-\d{2}-\d{2} \d{2}:\d{2}。开始聊天前，小天又在脑海内整理了近期发生的事情。$"
)


def test_new_dialog_shows_the_time_line_then_both_lines_of_the_turn(client, post_history):
    CharacterFactory.create(name="小天", master_name="阿凛")
    post_history("cache", "小天", ("human", "今天好累（叹气）[动作]"), ("ai", "辛苦啦～【摸摸头】"))
    response = client.get("/new_dialog/小天")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    lines = response.content.decode().splitlines()
    # The original's layout: persona header, (empty) persona, then "\n\n" + the inner-thoughts header.
    assert lines[:5] == ["", "======小天的长期记忆======", "", "", "======以下是小天的内心活动======"]
    assert INNER.match(lines[5])
    assert lines[6:8] == ["阿凛 | 今天好累", "小天 | 辛苦啦～"]


def test_new_dialog_renders_a_real_conversation_in_order(client, post_history):
    turns = conversation("memorybank-en")[:8]
    for turn in turns:
        kind = "human" if turn["role"] == "user" else "ai"
        post_history("cache", "Tian", (kind, turn["text"]), language="en")
    lines = client.get("/new_dialog/Tian").content.decode().splitlines()
    assert lines[1] == "======Tian's long-term memory======"
    inner = lines.index("======Tian's Inner Thoughts======") + 1
    assert lines[inner].startswith("The current time is ")
    assert lines[inner].endswith("Before the conversation begins, Tian is mentally reviewing recent events.")
    rendered = [line.split(" | ", 1)[1] for line in lines[inner + 1 :]]
    assert len(rendered) == len(turns)
    assert rendered[0] == turns[0]["text"].strip()
    assert as_messages(turns)[1]["type"] == "ai" and lines[inner + 2].startswith("Tian | ")


@pytest.mark.parametrize(
    ("hours", "expects_notice", "expects_long"), [(0.2, False, False), (1.5, True, False), (6.25, True, True)]
)
def test_gap_hints_follow_the_30_minute_and_5_hour_thresholds(
    client, post_history, hours, expects_notice, expects_long
):
    CharacterFactory.create(name="小天", master_name="阿凛")
    post_history("cache", "小天", ("human", "晚安"))
    RawMessage.objects.update(timestamp=timezone.now() - timedelta(hours=hours))
    text = client.get("/new_dialog/小天").content.decode()
    assert ("距离上次与阿凛聊天已经过去了" in text) is expects_notice
    assert ("很久没有和阿凛说话" in text) is expects_long
    if expects_long:
        assert "6小时15分钟" in text or "6小时14分钟" in text
        assert re.search(r"现在的时间是\d{4}-\d{2}-\d{2} \d{2}:\d{2}。距离上次", text)
