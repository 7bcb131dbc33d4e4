"""``/query_memory`` with a time expression inside the question (reference §4.5, extended to the eight
locales): the window filters the pools, the expression is not ranked on, and a vague question about a
time returns what that time holds."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.recall.support import fact_entry, import_facts

pytestmark = pytest.mark.django_db
NAME = "루미"


def ask(client, body: dict) -> dict:
    answer = client.post(
        f"/query_memory/{NAME}?explain=1", data=json.dumps(body), content_type="application/json"
    )
    assert answer.status_code == 200
    return answer.json()


@pytest.fixture
def memories(tmp_path):
    today = timezone.localtime().replace(hour=14, minute=0, second=0, microsecond=0)
    last_saturday = today - timedelta(days=today.weekday() + 2)
    facts = [
        fact_entry("지훈: 동생이랑 북한산에 등산 갔다 왔어", last_saturday, key="a"),
        fact_entry("지훈: 북한산 말고 관악산도 가보고 싶어", today - timedelta(days=40), key="b"),
        fact_entry("지훈: 회사 근처에서 떡볶이를 먹었어", today - timedelta(days=90), key="c"),
    ]
    import_facts(tmp_path, NAME, facts)
    return facts


@pytest.mark.parametrize("time", ["지난 주말에 어디 갔었지?", "지난 주말"])
def test_a_vague_question_about_a_time_gets_what_that_time_holds(client, memories, time) -> None:
    body = ask(client, {"query": "지난 주말에 어디 갔었지?", "time": time, "language": "ko"})
    assert body["mode"] == "hybrid+time"
    assert [row["text"] for row in body["results"]] == [memories[0]["text"]]
    assert body["window"] is not None


def test_without_a_time_the_question_is_ranked_as_it_is(client, memories) -> None:
    body = ask(client, {"query": "지난 주말에 어디 갔었지?"})
    assert body["mode"] == "hybrid" and body["window"] is None


def test_a_time_that_names_another_window_filters_without_touching_the_query(client, memories) -> None:
    # The question says last weekend, ``time`` says 90 days back: the window is ``time``'s.
    day = (timezone.localtime() - timedelta(days=90)).date().isoformat()
    body = ask(client, {"query": "지난 주말에 떡볶이 먹었지?", "time": day})
    assert [row["text"] for row in body["results"]] == [memories[2]["text"]]
