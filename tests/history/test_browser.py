"""The memory browser's history pages: the timeline, undo of a pass, a row's diff and restore, as of."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages

from facts.models import Fact
from facts.services import fact_update
from nekomem.journal.causes import change_cause
from nekomem.language.tables import load_locale_tables, table_problems
from tests.history.support import fact_by_text, facts_added, live_texts, moment

pytestmark = pytest.mark.django_db
PAGE = "/browse/小天/history/"
EN = {"accept-language": "en"}  # the messages this file reads are the English ones


def shown(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_the_timeline_filters_and_undoes_a_whole_pass(client, character):
    source = facts_added(character.pk, "阿凛喜欢猫", "阿凛怕打雷")
    cat = fact_by_text(character.pk, "阿凛喜欢猫")
    with change_cause("refine"):
        fact_update(character_id=character.pk, fact_id=cat.fact_id, text="阿凛讨厌猫")
    body = client.get(PAGE).content.decode()
    assert body.count('data-cause="import"') == 2 and body.count('data-cause="refine"') == 1
    assert f'value="{source}"' in body and "history/facts/" in body
    only = client.get(PAGE, {"cause": "refine"}).content.decode()
    assert 'data-cause="import"' not in only and 'data-cause="refine"' in only
    assert client.get(PAGE, {"since": "not a time"}).status_code == 200  # ignored, never an error page
    response = client.post(PAGE + "undo/", {"source": source, "filters": "cause=import"}, headers=EN)
    assert response.status_code == 302 and response["Location"].endswith("?cause=import")
    said = shown(response)
    assert any("Undid" in m and "left alone" in m and cat.fact_id in m for m in said)
    assert live_texts(character.pk) == {"阿凛讨厌猫"}  # the refined row changed since: left as it is


def test_a_rows_history_shows_a_diff_and_restores_with_a_refusal_first(client, character):
    facts_added(character.pk, "阿凛喜欢猫")
    cat = fact_by_text(character.pk, "阿凛喜欢猫")
    with change_cause("refine"):
        fact_update(character_id=character.pk, fact_id=cat.fact_id, text="阿凛讨厌猫")
    with change_cause("edit"):
        fact_update(character_id=character.pk, fact_id=cat.fact_id, importance=9)
    url = f"{PAGE}facts/{cat.fact_id}/"
    body = client.get(url).content.decode()
    assert "<del>阿凛喜欢猫</del> → <ins>阿凛讨厌猫</ins>" in body
    assert 'data-testid="restore-1"' in body and 'data-testid="restore-3"' not in body  # 3 is current
    refused = client.post(url + "restore/", {"version": "1"}, headers=EN)
    assert refused["Location"].endswith("?conflict=1") and any("Changed by hand" in m for m in shown(refused))
    assert Fact.objects.get(pk=cat.pk).text == "阿凛讨厌猫"
    assert 'data-testid="restore-force-1"' in client.get(refused["Location"]).content.decode()
    forced = client.post(url + "restore/", {"version": "1", "force": "1"}, headers=EN)
    assert any("Restored version 1" in m for m in shown(forced))
    assert Fact.objects.get(pk=cat.pk).text == "阿凛喜欢猫"
    assert client.get(f"{PAGE}nothing/x/").status_code == 404


def test_the_time_picker_shows_a_layer_as_it_was(client, character):
    facts_added(character.pk, "阿凛喜欢猫")
    at = moment()
    facts_added(character.pk, "阿凛在学日语")
    body = client.get(PAGE, {"as_of": at.strftime("%Y-%m-%dT%H:%M:%S.%f"), "layer": "facts"}).content.decode()
    table = body[body.index('data-testid="as-of-rows"') :]
    assert "阿凛喜欢猫" in table and "阿凛在学日语" not in table
    assert "历史 History" in client.get("/browse/小天/").content.decode()


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ({"data": {"lang": "ja"}}, "履歴"),
        ({"headers": {"accept-language": "ko-KR,ko;q=0.9"}}, "기록"),
        ({"data": {"lang": "zh-TW"}}, "歷史"),
        ({"data": {"lang": "ru"}}, "История"),
        ({"data": {"lang": "es"}}, "Historial"),
        ({"data": {"lang": "pt"}}, "Histórico"),
        ({"data": {"lang": "en"}}, "Undo this pass"),
        ({"data": {"lang": "zh"}}, "撤销这一批"),
    ],
)
def test_the_pages_speak_the_page_or_browser_language(client, character, how, said):
    facts_added(character.pk, "阿凛喜欢猫")
    body = client.get(PAGE, **how).content.decode()
    assert said in body
    cat = fact_by_text(character.pk, "阿凛喜欢猫")
    assert client.get(f"{PAGE}facts/{cat.fact_id}/", **how).status_code == 200


def test_a_message_is_told_in_the_language_the_form_was_in(client, character):
    source = facts_added(character.pk, "阿凛喜欢猫")
    response = client.post(PAGE + "undo/", {"source": source, "lang": "ja"})
    assert any("元に戻しました" in m for m in shown(response))
    assert response["Location"].endswith("lang=ja")


def test_every_locale_has_every_history_text():
    tables = load_locale_tables("history.locales")
    assert table_problems(tables) == []
