"""The recall playground: what /query_memory answers, with each path's rank, the fused score, the pool
and the time window used."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from recall.times import parse_time_window
from tests.characters.factories import CharacterFactory
from tests.facts.factories import make_fact

pytestmark = pytest.mark.django_db

NAME = "小雨"
URL = "/browse/小雨/recall/"


@pytest.fixture(autouse=True)
def _bm25_only(settings) -> None:
    # The ranks asserted here are BM25's and time's; the vector path has its own tests.
    settings.EMBEDDINGS_ENABLED = False


def results(page) -> list[dict]:
    assert page.status_code == 200
    return page.context["rows"]


def test_a_cached_turn_comes_back_with_its_bm25_ranks_fused_score_and_pool(
    client: Client, post_history
) -> None:
    post_history("cache", NAME, ("human", "我昨天在东京吃了一碗拉面"), ("ai", "听起来好好吃！"))
    page = client.get(URL, {"q": "东京拉面"})
    rows = results(page)
    assert rows[0]["row"]["text"] == "我昨天在东京吃了一碗拉面"
    assert rows[0]["pool"] == "raw turns" and rows[0]["fused"] > 0
    columns = [path for path, _ in page.context["columns"]]
    assert columns[0].startswith("bm25:") and "cosine" not in columns
    assert rows[0]["paths"][0]["rank"] == 1
    html = page.content.decode()
    assert "我昨天在东京吃了一碗拉面" in html and "混合检索 Hybrid" in html
    assert "时间窗口 Time window:" in html and "无 none" in html


def test_the_playground_answers_exactly_what_query_memory_answers(client: Client, post_history) -> None:
    character = CharacterFactory.create(name=NAME)
    for text in (
        "主人喜欢在雨天喝热可可",
        "主人养了一只叫团子的橘猫",
        "主人周末常去爬山",
        "团子最喜欢晒太阳",
    ):
        make_fact(character=character, text=text)
    wire = client.post(
        f"/query_memory/{NAME}",
        data=json.dumps({"query": "团子 橘猫", "explain": True}),
        content_type="application/json",
    ).json()["results"]
    shown = [item["row"] for item in results(client.get(URL, {"q": "团子 橘猫"}))]
    assert [(r["id"], r["score"], r["explain"]) for r in shown] == [
        (r["id"], r["score"], r["explain"]) for r in wire
    ]
    assert shown[0]["text"] == "主人养了一只叫团子的橘猫" and shown[0]["explain"]["pool"] == "fact"


def test_query_and_time_filter_by_the_window_shown(client: Client) -> None:
    character = CharacterFactory.create(name=NAME)
    now = timezone.now()
    yesterday = now - timedelta(days=1)
    make_fact(
        character=character, text="主人在公园散步看到了樱花", created_at=yesterday, event_start_at=yesterday
    )
    make_fact(
        character=character,
        text="主人在公园喂了鸽子",
        created_at=now - timedelta(days=40),
        event_start_at=now - timedelta(days=40),
    )

    page = client.get(URL, {"q": "公园", "time": "昨天"})
    rows = results(page)
    assert [item["row"]["text"] for item in rows] == ["主人在公园散步看到了樱花"]
    answer = page.context["answer"]
    window = parse_time_window("昨天", now=timezone.now(), tz=settings.TIME_ZONE)
    assert window is not None
    assert (answer["window"]["start"], answer["window"]["end"]) == (
        timezone.localtime(window.start).isoformat(),
        timezone.localtime(window.end).isoformat(),
    )
    html = page.content.decode()
    assert answer["window"]["start"] in html and "先按时间窗口筛选" in html


def test_time_alone_ranks_on_the_time_path(client: Client) -> None:
    character = CharacterFactory.create(name=NAME)
    now = timezone.now()
    for days, text in ((1, "昨天的事"), (3, "三天前的事"), (30, "一个月前的事")):
        moment = now - timedelta(days=days)
        make_fact(character=character, text=text, created_at=moment, event_start_at=moment)
    page = client.get(URL, {"time": "昨天"})
    rows = results(page)
    assert [path for path, _ in page.context["columns"]] == ["time"]
    assert [item["row"]["text"] for item in rows] == ["昨天的事", "三天前的事", "一个月前的事"]
    ranks = [item["row"]["explain"]["paths"]["time"] for item in rows]
    assert [r["rank"] for r in ranks] == [1, 2, 3]
    assert ranks[0]["score"] == 0 and 0 < ranks[1]["score"] < ranks[2]["score"]  # seconds outside the window
    assert all(item["fused"] is None for item in rows)
    assert "只按时间：窗口内优先，再按距离 Time only" in page.content.decode()


def test_a_time_expression_it_cannot_read_falls_back_to_semantic_recall(client: Client, post_history) -> None:
    post_history("cache", NAME, ("human", "我们去看了烟花大会"))
    page = client.get(URL, {"q": "烟花", "time": "在那个很久很久以前"})
    assert [item["row"]["text"] for item in results(page)] == ["我们去看了烟花大会"]
    assert page.context["answer"]["window"] is None
    assert "无法解析 not understood" in page.content.decode()


def test_bad_input_shows_an_error_and_no_results(client: Client) -> None:
    CharacterFactory.create(name=NAME)
    page = client.get(URL, {"q": "x", "config": "no-such-config"})
    assert page.status_code == 200 and "rows" not in page.context
    assert any("查询无效 Invalid query" in str(m) for m in page.context["messages"])
    empty = client.get(URL)
    assert empty.status_code == 200 and "answer" not in empty.context
    assert empty.context["active_tab"] == "recall"
    assert client.get("/browse/nobody/recall/").status_code == 404
