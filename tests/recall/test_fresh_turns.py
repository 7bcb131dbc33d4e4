"""A turn is findable the moment ``/cache`` answers, by any query a person types."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.django_db
NAME = "小雨"


def found(client, query: str) -> list[str]:
    answer = client.post(
        f"/query_memory/{NAME}", data=json.dumps({"query": query}), content_type="application/json"
    )
    assert answer.status_code == 200
    return [row["text"] for row in answer.json()["results"]]


@pytest.mark.parametrize(
    ("said", "query"),
    [
        ("我家的猫今天打翻了花瓶", "猫"),
        ("昨天去公园遛狗了", "狗"),
        ("週末に猫カフェへ行った", "猫"),
        ("우리 집 개가 아파요", "개"),
        ("My sister Ottilie moved to Lisbon", "Ottilie"),
        ("The gate code is 4471", "4471"),
        ("We had tea by the river", "tea"),
        ("Мы пили чай у реки", "чай"),
    ],
)
def test_a_cached_turn_is_found_at_once_by_a_short_query(client, post_history, said, query) -> None:
    assert post_history("cache", NAME, ("human", said), ("ai", "嗯嗯")).status_code == 200
    assert said in found(client, query)
