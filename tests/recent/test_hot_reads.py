"""The window and last-time reads of every ``/new_dialog`` run SQL built once (one statement for both);
they answer exactly what the ORM querysets they replace answer."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db.models import Max
from django.utils import timezone

from recent.models import RawMessage, RecentMessage
from recent.selectors import raw_log_last_timestamp, recent_window_with_last_time
from tests.characters.factories import CharacterFactory
from tests.recent.factories import RawMessageFactory, RecentMessageFactory

pytestmark = pytest.mark.django_db


def test_the_window_rows_are_the_querysets_rows_in_position_order() -> None:
    mel, other = CharacterFactory.create(), CharacterFactory.create()
    # Written out of order, with a memo, nested JSON and text in both languages.
    RecentMessageFactory.create(character=mel, position=7, type="ai", data={"content": "好的，明天见 😺"})
    RecentMessageFactory.create(
        character=mel, position=2, type="system", data={"content": "先前对话的备忘录: …"}
    )
    RecentMessageFactory.create(
        character=mel, position=5, type="human", data={"content": [{"type": "text", "text": "see you"}]}
    )
    RecentMessageFactory.create(character=other, position=3, type="human", data={"content": "not Mel's"})
    expected = list(
        RecentMessage.objects.filter(character_id=mel.pk).order_by("position").values_list("type", "data")
    )
    assert recent_window_with_last_time(character_id=mel.pk) == (expected, None)
    assert [kind for kind, _ in expected] == ["system", "human", "ai"]
    assert recent_window_with_last_time(character_id=CharacterFactory.create().pk) == ([], None)


def test_the_window_comes_with_the_raw_logs_last_time_even_when_it_is_empty() -> None:
    mel, other = CharacterFactory.create(), CharacterFactory.create()
    now = timezone.now().replace(microsecond=654321)
    for minutes in (5, 0, 0, 20):  # out of order, with a tie at the newest time
        RawMessageFactory.create(character=mel, timestamp=now - timedelta(minutes=minutes))
    RawMessageFactory.create(character=other, timestamp=now + timedelta(days=1))
    assert recent_window_with_last_time(character_id=mel.pk) == ([], now)  # compressed away, say
    for position, said in enumerate(("早上好", "good morning", "今天去公园吗？")):
        RecentMessageFactory.create(character=mel, position=position, type="human", data={"content": said})
    window, last = recent_window_with_last_time(character_id=mel.pk)
    assert [data["content"] for _, data in window] == ["早上好", "good morning", "今天去公园吗？"]
    assert last == RawMessage.objects.filter(character_id=mel.pk).aggregate(last=Max("timestamp"))["last"]
    assert last is not None and last.tzinfo is not None


def test_the_last_raw_time_is_the_aggregates_maximum() -> None:
    mel, other = CharacterFactory.create(), CharacterFactory.create()
    assert raw_log_last_timestamp(character_id=mel.pk) is None
    now = timezone.now().replace(microsecond=123456)
    for minutes in (30, 0, 10, 0):  # out of order, and a tie at the newest time
        RawMessageFactory.create(character=mel, timestamp=now - timedelta(minutes=minutes))
    RawMessageFactory.create(character=other, timestamp=now + timedelta(hours=1))
    expected = RawMessage.objects.filter(character_id=mel.pk).aggregate(last=Max("timestamp"))["last"]
    last = raw_log_last_timestamp(character_id=mel.pk)
    assert last == expected == now
    assert last is not None and last.tzinfo is not None
