"""The raw-turn pool: turns extraction has not covered are recalled (labelled as raw turns) from the first
turn, without any LLM, and leave the pool once extraction's cursor covers them."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from facts.models import ExtractionCursor
from nekomem.characters.models import Character
from recall import index_cache
from recent.models import RawMessage
from recent.services import raw_log_append

pytestmark = pytest.mark.django_db
NAME = "小雨"


def recalled(client, query: str) -> list[dict]:
    answer = client.post(
        f"/query_memory/{NAME}",
        data=json.dumps({"query": query, "explain": True}),
        content_type="application/json",
    )
    assert answer.status_code == 200
    return answer.json()["results"]


def test_uncovered_turns_are_recalled_as_raw_turns_until_extraction_covers_them(client, post_history) -> None:
    post_history("cache", NAME, ("human", "我昨天在东京吃了一碗拉面"), ("ai", "听起来好好吃！"))
    rows = recalled(client, "东京拉面")
    assert rows and rows[0]["text"] == "我昨天在东京吃了一碗拉面"
    assert rows[0]["tier"] == "raw_turn" and rows[0]["explain"]["pool"] == "raw turns"
    assert rows[0]["entity"] == "master"
    built = index_cache.counters["full_builds"]

    post_history("cache", NAME, ("human", "下周我要去北海道滑雪"))
    assert recalled(client, "北海道滑雪")[0]["text"] == "下周我要去北海道滑雪"  # a new turn: no rebuild

    character = Character.objects.get(name=NAME)
    first_turn = RawMessage.objects.filter(character=character).order_by("timestamp", "pk").first()
    assert first_turn is not None
    # Extraction has read the first call's turns: they leave the pool; the later one stays.
    ExtractionCursor.objects.update_or_create(
        character=character, defaults={"last_a_message_at": first_turn.timestamp}
    )
    assert all(r["text"] != "我昨天在东京吃了一碗拉面" for r in recalled(client, "东京拉面"))
    assert recalled(client, "北海道滑雪")[0]["text"] == "下周我要去北海道滑雪"
    ExtractionCursor.objects.filter(character=character).update(last_a_message_at=timezone.now())
    assert recalled(client, "北海道滑雪") == []
    assert index_cache.counters["full_builds"] == built


def test_turns_sharing_a_timestamp_are_read_once_across_page_boundaries(monkeypatch) -> None:
    """The raw-turn reader pages by (timestamp, id): a page that ends inside a run of equal timestamps
    neither repeats nor skips the rest of the run, from the start or after a row already read."""
    from recall.selectors import pools as selectors

    monkeypatch.setattr(selectors, "CHUNK", 2)
    character = Character.objects.create(name=NAME)
    at = [timezone.now() - timedelta(minutes=m) for m in (3, 3, 3, 2, 2, 1, 1)]
    made = [
        RawMessage.objects.create(
            character=character,
            session_id="s",
            message=json.dumps({"type": "human", "data": {"content": f"第{i}句 turn {i}"}}),
            timestamp=when,
        )
        for i, when in enumerate(at)
    ]
    expected = sorted(made, key=lambda m: (m.timestamp, m.pk))

    def read(after=None) -> list[int | None]:
        found = selectors.raw_turn_candidates(
            character_id=character.pk, space=None, after=after, covered=None
        )
        return [c.key for c in found]

    assert read() == [m.pk for m in expected]
    middle = expected[1]  # inside the first run of three equal timestamps
    assert read((middle.timestamp, middle.pk)) == [m.pk for m in expected[2:]]
    assert read((expected[-1].timestamp, expected[-1].pk)) == []


def test_a_query_reads_the_raw_log_only_when_its_row_count_moved(client, post_history) -> None:
    """Every raw-log write counts its rows on the character in its own transaction: a query that reads
    the count its index has seen reads no raw turns; one more row, by any writer, and it reads."""
    post_history("cache", NAME, ("human", "我昨天在东京吃了一碗拉面"), ("ai", "听起来好好吃！"))
    assert recalled(client, "东京拉面")
    reads = index_cache.counters["raw_turn_reads"]
    assert recalled(client, "拉面")
    assert index_cache.counters["raw_turn_reads"] == reads

    post_history("cache", NAME, ("human", "下周我要去北海道滑雪"))  # the hot path's one statement
    assert recalled(client, "北海道滑雪")[0]["text"] == "下周我要去北海道滑雪"
    character = Character.objects.get(name=NAME)
    raw_log_append(  # the ORM path (a long history, /renew)
        character_id=character.pk,
        messages=[{"type": "human", "data": {"content": "我哥哥在大阪开了一家咖啡店"}}],
        timestamp=timezone.now(),
    )
    assert recalled(client, "大阪咖啡店")[0]["text"] == "我哥哥在大阪开了一家咖啡店"
    assert index_cache.counters["raw_turn_reads"] == reads + 2
    character.refresh_from_db()
    assert character.raw_rows_written == RawMessage.objects.filter(character=character).count() == 4
