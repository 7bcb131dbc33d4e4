"""Forgetting a time range of the raw log: the service's copies, the REST action with its preview and
its 400s, and the browser's preview-then-confirm."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from nekomem.characters.models import Character
from recent.models import RawMessage, RecentMessage
from recent.services import raw_log_append
from tests.characters.factories import CharacterFactory
from tests.recent.factories import RecentMessageFactory

pytestmark = pytest.mark.django_db

DAY_ONE = timezone.make_aware(datetime(2024, 5, 1, 9, 30))
DAY_TWO = timezone.make_aware(datetime(2024, 5, 3, 21, 15))
API = "/api/v1/characters/小天/raw/forget/"
BROWSE = "/browse/小天/recent/forget/"


def log(character: Character, at: datetime, *texts: str) -> None:
    messages = [{"type": ("human", "ai")[i % 2], "data": {"content": text}} for i, text in enumerate(texts)]
    raw_log_append(character_id=character.pk, messages=messages, timestamp=at)


@pytest.fixture
def logged() -> Character:
    character = CharacterFactory.create(name="小天")
    log(character, DAY_ONE, "今天去公园散步了", "听起来很惬意呢")
    log(character, DAY_TWO, "晚上下雨了", "记得带伞哦")
    RecentMessageFactory.create(character=character, position=1, type="human", data={"content": "晚上下雨了"})
    RecentMessageFactory.create(character=character, position=2, type="ai", data={"content": "别的话"})
    return character


def stored() -> list[str]:
    return sorted(
        json.loads(m)["data"]["content"] for m in RawMessage.objects.values_list("message", flat=True)
    )


def day_two() -> dict[str, str]:
    return {
        "start": (DAY_TWO - timedelta(hours=1)).isoformat(),
        "end": (DAY_TWO + timedelta(hours=1)).isoformat(),
    }


def test_preview_then_forget_through_rest(client, logged) -> None:
    preview = client.post(API, {**day_two(), "preview": True}, content_type="application/json")
    assert preview.status_code == 200
    assert preview.json()["count"] == 2
    assert [t["text"] for t in preview.json()["turns"]] == ["晚上下雨了", "记得带伞哦"]
    assert len(stored()) == 4  # a preview removes nothing

    done = client.post(API, day_two(), content_type="application/json")
    assert done.status_code == 200
    assert done.json()["removed"]["raw_turns"] == 2
    assert done.json()["removed"]["window_messages"] == 1
    assert stored() == ["今天去公园散步了", "听起来很惬意呢"]
    window = [m.data["content"] for m in RecentMessage.objects.filter(character=logged)]
    assert window == ["别的话"]
    assert Character.objects.get(pk=logged.pk).forgotten_version > 0


@pytest.mark.parametrize(
    "body",
    [
        {"start": "2024-05-03T22:00:00+00:00", "end": "2024-05-03T20:00:00+00:00"},  # reversed
        {"start": "2024-05-03T20:00:00+00:00"},  # no end
        {"start": "yesterday", "end": "today"},
    ],
)
def test_a_bad_range_is_400_and_changes_nothing(client, logged, body) -> None:
    answer = client.post(API, body, content_type="application/json")
    assert answer.status_code == 400, answer.content
    assert answer.json()
    assert len(stored()) == 4


def test_the_browser_previews_then_forgets(client, logged) -> None:
    local = {
        key: timezone.localtime(datetime.fromisoformat(value)).strftime("%Y-%m-%dT%H:%M")
        for key, value in day_two().items()
    }
    page = client.get(BROWSE, local)
    assert page.status_code == 200
    body = page.content.decode()
    assert "晚上下雨了" in body and "记得带伞哦" in body and "今天去公园散步了" not in body
    assert len(stored()) == 4
    done = client.post(BROWSE, local, follow=True)
    assert done.status_code == 200
    assert "raw_turns 2" in done.content.decode()
    assert stored() == ["今天去公园散步了", "听起来很惬意呢"]


def test_the_browser_refuses_a_reversed_range(client, logged) -> None:
    done = client.post(BROWSE, {"start": "2024-05-03T22:00", "end": "2024-05-03T20:00"}, follow=True)
    assert "Nothing changed" in done.content.decode()
    assert len(stored()) == 4
