from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from recent.models import RawMessage
from tests.characters.factories import CharacterFactory
from tests.recent.factories import RecentMessageFactory

pytestmark = pytest.mark.django_db


def test_recent_history_is_an_intro_then_speaker_lines_with_memo_bare(client, post_history):
    character = CharacterFactory.create(name="小天", master_name="阿凛")
    post_history("cache", "小天", ("human", "今天好累"), ("ai", "辛苦啦～"))
    RecentMessageFactory.create(
        character=character,
        position=-1,
        type="system",
        data={"content": "先前对话的备忘录: 阿凛在准备考试"},
    )
    response = client.get("/get_recent_history/小天")
    assert response["Content-Type"].startswith("text/plain")
    lines = response.content.decode().splitlines()
    assert lines[0] == "开始聊天前，小天又在脑海内整理了近期发生的事情。"
    assert lines[1:] == ["先前对话的备忘录: 阿凛在准备考试", "阿凛 | 今天好累", "小天 | 辛苦啦～"]


def test_recent_history_in_english_when_the_chat_speaks_english(client, post_history):
    post_history("cache", "Tian", ("human", "hello"), language="en-US")
    lines = client.get("/get_recent_history/Tian").content.decode().splitlines()
    assert lines == ["Before the chat begins, Tian mentally reviews recent events.", "Master | hello"]


def test_unknown_character_reads_are_empty(client):
    assert client.get("/get_recent_history/nobody").content == b""
    assert client.get("/last_conversation_gap/nobody").json() == {"gap_seconds": -1}
    assert client.get("/new_dialog/nobody").content == b""


def test_last_conversation_gap_uses_the_newest_raw_row(client, post_history):
    post_history("cache", "小天", ("human", "在吗"))
    RawMessage.objects.update(timestamp=timezone.now() - timedelta(hours=2))
    gap = client.get("/last_conversation_gap/小天").json()["gap_seconds"]
    assert 7190 < gap < 7300
