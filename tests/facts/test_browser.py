"""The facts page of the memory browser: listing, filters, pagination, the actions and their refusals."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from facts.models import Fact, FactDedupPair
from nekomem.characters.models import Character
from nekomem.journal.models import Event
from tests.facts.conftest import T0
from tests.facts.factories import FactFactory
from tests.support.pages import front_door_row

pytestmark = pytest.mark.django_db

PAGE = "/browse/小天/facts/"
PAGE_URL = reverse("browser-facts", kwargs={"name": "小天"})  # as a redirect names it


def memory_version(character_id: int) -> int:
    return Character.objects.values_list("memory_version", flat=True).get(pk=character_id)


def shown(client: Client, **params: Any) -> str:
    answer = client.get(PAGE, params)
    assert answer.status_code == 200
    return answer.content.decode()


def post(client: Client, action: str, **fields: Any):
    return client.post(f"{PAGE}{action}/", fields)


def state(fact: Fact) -> tuple:
    fact.refresh_from_db()
    return (fact.text, fact.importance, fact.entity, fact.archived)


@pytest.fixture
def facts(character: Character) -> dict[str, Fact]:
    return {
        "cat": FactFactory.create(
            character=character, text="阿凛养了一只橘猫", importance=8, created_at=T0 + timedelta(hours=3)
        ),
        "shop": FactFactory.create(
            character=character, text="阿凛路过便利店", importance=2, created_at=T0 + timedelta(hours=2)
        ),
        "thunder": FactFactory.create(
            character=character,
            text="小天怕打雷",
            entity=Fact.Entity.NEKO,
            absorbed=True,
            created_at=T0 + timedelta(hours=1),
        ),
        "kyoto": FactFactory.create(
            character=character, text="阿凛去年去了京都", absorbed=True, archived=True, created_at=T0
        ),
        "stranger": FactFactory.create(text="别的角色的秘密"),
    }


def test_the_page_lists_the_characters_facts_newest_first_with_their_status(client, facts):
    body = shown(client)
    order = [body.index(facts[k].text) for k in ("cat", "shop", "thunder", "kyoto")]
    assert order == sorted(order)
    assert "别的角色的秘密" not in body
    assert "已归档 Archived" in body and "已吸收 Absorbed" in body and "活跃 Active" in body
    assert "事实 Facts" in body and 'class="active"' in body  # its tab, marked as the open one


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"q": "阿凛"}, {"cat", "shop", "kyoto"}),
        ({"entity": "neko"}, {"thunder"}),
        ({"status": "active"}, {"cat", "shop"}),
        ({"status": "absorbed"}, {"thunder"}),
        ({"status": "archived"}, {"kyoto"}),
        ({"importance": "5"}, {"cat", "thunder", "kyoto"}),
        ({"q": "阿凛", "status": "active", "importance": "5"}, {"cat"}),
    ],
)
def test_filters(client, facts, params, expected):
    body = shown(client, **params)
    assert {k for k in ("cat", "shop", "thunder", "kyoto") if facts[k].text in body} == expected


def test_a_bad_filter_is_named_and_ignored(client, facts):
    body = shown(client, importance="11", entity="dog")
    assert "Invalid filter" in body and "importance" in body and "entity" in body
    assert all(facts[k].text in body for k in ("cat", "shop", "thunder", "kyoto"))


def test_pages_of_fifty_keep_the_filters(client, character):
    start = timezone.now()
    for n in range(55):
        FactFactory.create(
            character=character, text=f"主人喜欢第{n:02d}本书", created_at=start + timedelta(seconds=n)
        )
    FactFactory.create(character=character, text="主人不喜欢下雨", created_at=start)
    first = shown(client, q="本书")
    assert "主人喜欢第54本书" in first and "主人喜欢第05本书" in first and "主人喜欢第04本书" not in first
    assert "?q=%E6%9C%AC%E4%B9%A6&amp;page=2" in first
    second = shown(client, q="本书", page=2)
    assert "主人喜欢第04本书" in second and "主人喜欢第00本书" in second and "主人喜欢第05本书" not in second
    assert "主人不喜欢下雨" not in second and "第 2 / 2 页" in second


def test_pairs_waiting_for_arbitration_show_both_texts(client, facts, character):
    FactDedupPair.objects.create(
        character=character,
        candidate=facts["shop"],
        existing=facts["cat"],
        candidate_fact_id=facts["shop"].fact_id,
        existing_fact_id=facts["cat"].fact_id,
        candidate_text="阿凛常去便利店买猫粮",
        existing_text="阿凛每周买一次猫粮",
        entity="master",
        queued_at=T0,
    )
    body = shown(client)
    section = body[body.index('data-testid="dedup-pairs"') :]
    assert "阿凛常去便利店买猫粮" in section and "阿凛每周买一次猫粮" in section
    assert "1 对 pairs" in body


def test_an_edit_changes_the_fact_as_the_api_does_and_comes_back_to_the_list(client, facts, character):
    cat = facts["cat"]
    before = memory_version(character.pk)
    answer = post(
        client,
        "edit",
        fact_id=cat.fact_id,
        text="阿凛养了一只柴犬",
        importance=9,
        entity="relationship",
        back="status=active&page=1",
    )
    assert answer.status_code == 302 and answer["Location"] == f"{PAGE_URL}?status=active&page=1"
    assert state(cat) == ("阿凛养了一只柴犬", 9, "relationship", False)
    assert cat.dedup_tokens and cat.embedding == ""  # re-indexed, and re-embedded by the backfill
    assert memory_version(character.pk) == before + 1
    assert "已保存 Saved" in client.get(answer["Location"]).content.decode()


def test_delete_archive_and_restore(client, facts, character):
    shop, kyoto = facts["shop"], facts["kyoto"]
    archived = post(client, "archive", fact_id=shop.fact_id)
    assert archived.status_code == 302 and archived["Location"] == PAGE_URL
    shop.refresh_from_db()
    assert shop.archived and shop.archived_at is not None
    assert Event.objects.filter(character=character, type="fact.archived").count() == 1
    assert "已归档 Archived" in client.get(PAGE).content.decode()

    assert post(client, "restore", fact_id=kyoto.fact_id).status_code == 302
    kyoto.refresh_from_db()
    assert not kyoto.archived and kyoto.archived_at is None and kyoto.absorbed

    assert post(client, "delete", fact_id=shop.fact_id).status_code == 302
    assert not Fact.objects.filter(pk=shop.pk).exists()
    assert "已删除 Deleted" in client.get(PAGE).content.decode()


@pytest.mark.parametrize(
    ("action", "fields", "error"),
    [
        (
            "edit",
            {"fact_id": "fact_nobody", "text": "新的", "importance": 5, "entity": "master"},
            "no such fact",
        ),
        ("edit", {"fact_id": "<cat>", "text": "   ", "importance": 5, "entity": "master"}, "text"),
        ("edit", {"fact_id": "<cat>", "text": "新的", "importance": 11, "entity": "master"}, "importance"),
        ("edit", {"fact_id": "<cat>", "text": "新的", "importance": 5, "entity": "dog"}, "entity"),
        (
            "edit",
            {"fact_id": "<stranger>", "text": "新的", "importance": 5, "entity": "master"},
            "no such fact",
        ),
        ("delete", {"fact_id": "fact_nobody"}, "no such fact"),
        ("delete", {"fact_id": "<stranger>"}, "no such fact"),
        ("archive", {"fact_id": "fact_nobody"}, "no such fact"),
        ("archive", {}, "fact_id"),
        ("restore", {"fact_id": "<stranger>"}, "no such fact"),
    ],
)
def test_bad_input_changes_nothing_and_says_why(client, facts, action, fields, error):
    fields = {k: facts[v[1:-1]].fact_id if str(v).startswith("<") else v for k, v in fields.items()}
    before = {k: state(f) for k, f in facts.items()}
    answer = post(client, action, **fields)
    assert answer.status_code == 302
    assert {k: state(f) for k, f in facts.items()} == before
    page = client.get(answer["Location"]).content.decode()
    assert 'class="error"' in page and "Nothing changed" in page and error in page


def test_an_action_without_the_csrf_token_is_refused(facts):
    guarded = Client(enforce_csrf_checks=True)
    for action in ("edit", "delete", "archive", "restore"):
        answer = guarded.post(
            f"{PAGE}{action}/",
            {"fact_id": facts["cat"].fact_id, "text": "改掉", "importance": 1, "entity": "neko"},
        )
        assert answer.status_code == 403, action
    assert state(facts["cat"]) == ("阿凛养了一只橘猫", 8, "master", False)


def test_unknown_character_and_get_on_an_action(client, facts):
    assert client.get("/browse/nobody/facts/").status_code == 404
    assert client.post("/browse/nobody/facts/archive/", {"fact_id": facts["cat"].fact_id}).status_code == 404
    assert client.get(f"{PAGE}archive/").status_code == 405
    assert not Fact.objects.get(pk=facts["cat"].pk).archived


def test_the_front_door_counts_every_fact_archived_ones_too(client, facts):
    assert front_door_row(client, "小天")["事实 Facts"] == "4"
