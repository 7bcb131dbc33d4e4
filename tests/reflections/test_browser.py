"""The memory browser's reflections page: the list, its filters and pages, and every action."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from nekomem.characters.models import Character
from reflections.models import Reflection, SurfacedReflection
from reflections.services import reflection_archive
from reflections.services.records import reflection_to_file_dict
from tests.characters.factories import CharacterFactory
from tests.facts.factories import make_fact
from tests.reflections.factories import make_reflection
from tests.support.comparable import comparable, events_since, last_event_seq

pytestmark = pytest.mark.django_db

PAGE = "/browse/%E5%B0%8F%E5%A4%A9/reflections/"  # as the page links to itself


def state(character: Character) -> list[Any]:
    rows = Reflection.objects.filter(character=character).order_by("reflection_id")
    return [comparable(reflection_to_file_dict(r)) for r in rows]


def twin(character: Character, **fields: Any) -> tuple[Reflection, Character, Reflection]:
    """The same reflection under the page's character and under a second one, for the REST API."""
    other = CharacterFactory.create(name="小地")
    fields = {"source_fact_ids": ["fact_20240501120000_0a0b0c0d"], "created_at": timezone.now(), **fields}
    return make_reflection(character=character, **fields), other, make_reflection(character=other, **fields)


def page_text(client: Client, **params: str) -> str:
    response = client.get(PAGE, params)
    assert response.status_code == 200
    return response.content.decode()


def test_the_page_shows_evidence_source_facts_and_surfaced_history(client: Client, character) -> None:
    now = timezone.now()
    fact = make_fact(character=character, text="主人周末常去爬山")
    reflection = make_reflection(
        character=character,
        text="主人是个喜欢户外的人",
        source_fact_ids=[fact.fact_id, "fact_20200101000000_deadbeef"],
        reinforcement=1.25,
        disputation=0.5,
        rein_last_signal_at=now,
        disp_last_signal_at=now - timedelta(days=2),
    )
    SurfacedReflection.objects.create(
        character=character,
        reflection_id=reflection.reflection_id,
        text=reflection.text,
        surfaced_at=now - timedelta(days=1),
        feedback=Reflection.Feedback.CONFIRMED,
    )
    body = page_text(client)
    assert "主人是个喜欢户外的人" in body and reflection.reflection_id in body
    assert "R 1.250" in body and "D 0.500" in body
    assert timezone.localtime(now).strftime("%Y-%m-%d %H:%M") in body  # the reinforcement clock
    assert "主人周末常去爬山" in body
    assert f'href="/browse/%E5%B0%8F%E5%A4%A9/facts/?q={fact.fact_id}"' in body
    assert "fact_20200101000000_deadbeef" in body and "no longer stored" in body
    assert "confirmed" in body and (timezone.localtime(now) - timedelta(days=1)).strftime("%Y-%m-%d") in body
    assert 'class="active">反思 Reflections<' in body


def test_the_layer_page_is_registered_with_its_count(client: Client, character) -> None:
    make_reflection(character=character)
    make_reflection(character=character)
    overview = client.get("/browse/小天/").content.decode()
    assert 'href="/browse/%E5%B0%8F%E5%A4%A9/reflections/"' in overview
    assert "<td>2</td>" in client.get("/").content.decode()


def test_filters_by_status_archive_and_text(client: Client, character) -> None:
    pending = make_reflection(character=character, text="主人喜欢猫")
    confirmed = make_reflection(character=character, text="主人讨厌早起", status=Reflection.Status.CONFIRMED)
    archived = make_reflection(character=character, text="主人曾经养过狗")
    reflection_archive(character_id=character.pk, reflection_id=archived.reflection_id)

    def shown(**params: str) -> set[str]:
        body = page_text(client, **params)
        return {r.reflection_id for r in (pending, confirmed, archived) if r.reflection_id in body}

    assert shown() == {pending.reflection_id, confirmed.reflection_id, archived.reflection_id}
    assert shown(status="confirmed") == {confirmed.reflection_id}
    assert shown(archived="yes") == {archived.reflection_id}
    assert shown(archived="no") == {pending.reflection_id, confirmed.reflection_id}
    assert shown(q="早起") == {confirmed.reflection_id}
    assert shown(q=pending.reflection_id) == {pending.reflection_id}
    assert shown(status="no-such-status") == shown()  # an unknown value filters nothing


def test_pages_of_fifty_newest_first_keep_the_filters(client: Client, character) -> None:
    start = timezone.now() - timedelta(days=1)
    made = [
        make_reflection(character=character, text=f"反思{n:03d}", created_at=start + timedelta(minutes=n))
        for n in range(53)
    ]
    first = page_text(client, q="反思")
    assert "反思052" in first and "反思003" in first and "反思002" not in first
    assert "?q=%E5%8F%8D%E6%80%9D&amp;page=2" in first
    second = page_text(client, q="反思", page="2")
    assert all(f"反思{n:03d}" in second for n in range(3)) and "反思003" not in second
    assert page_text(client, page="99").count("data-reflection-id") == 3  # past the end: the last page
    assert len(made) == 53


@pytest.mark.parametrize(
    ("verb", "before", "archived_first"),
    [
        ("confirm", Reflection.Status.PENDING, False),
        ("deny", Reflection.Status.CONFIRMED, False),
        ("archive", Reflection.Status.PENDING, False),
        ("restore", Reflection.Status.DENIED, True),
    ],
)
def test_each_action_changes_what_the_rest_action_changes(
    client: Client, character, verb: str, before: str, archived_first: bool
) -> None:
    mine, other, theirs = twin(character, status=before, text="主人喜欢下雨天")
    if archived_first:
        reflection_archive(character_id=character.pk, reflection_id=mine.reflection_id)
        reflection_archive(character_id=other.pk, reflection_id=theirs.reflection_id)
    seq = last_event_seq()
    listing = PAGE + "?status=" + before
    response = client.post(f"{PAGE}{mine.reflection_id}/{verb}/", {"next": listing}, follow=True)
    assert response.redirect_chain == [(listing, 302)]
    assert "messages" in response.content.decode() and mine.reflection_id in response.content.decode()
    mine_events = events_since(character.pk, seq)
    seq = last_event_seq()
    api = client.post(
        f"/api/v1/characters/小地/reflections/{theirs.reflection_id}/{verb}/",
        data="{}",
        content_type="application/json",
    )
    assert api.status_code == 200
    assert state(character) == state(other)
    assert mine_events == events_since(other.pk, seq) and mine_events
    mine.refresh_from_db()
    assert mine.status != before


def test_edit_changes_what_the_rest_edit_changes(client: Client, character) -> None:
    mine, other, theirs = twin(
        character, text="主人喜欢下雨天", relation_type="preference", temporal_scope="state"
    )
    seq = last_event_seq()
    response = client.post(
        f"{PAGE}{mine.reflection_id}/edit/", {"text": "  主人喜欢下雨天听雨声  ", "next": PAGE}, follow=True
    )
    assert "已保存 Saved" in response.content.decode()
    mine_events = events_since(character.pk, seq)
    seq = last_event_seq()
    api = client.patch(
        f"/api/v1/characters/小地/reflections/{theirs.reflection_id}/",
        {"text": "主人喜欢下雨天听雨声"},
        content_type="application/json",
    )
    assert api.status_code == 200 and api.json()["text"] == "主人喜欢下雨天听雨声"
    assert state(character) == state(other)
    assert mine_events == events_since(other.pk, seq) and len(mine_events) == 1
    mine.refresh_from_db()
    assert (mine.text, mine.relation_type) == ("主人喜欢下雨天听雨声", "preference")


@pytest.mark.parametrize(
    ("path", "data", "error"),
    [
        ("ref_0000000000000000/confirm/", {}, "No such reflection"),
        ("ref_0000000000000000/edit/", {"text": "新的文本"}, "No such reflection"),
        ("{id}/confirm/", {}, "cannot confirm a confirmed reflection"),
        ("{id}/restore/", {}, "not archived"),
        ("{id}/edit/", {"text": "   "}, "Invalid input: text"),
        ("{id}/edit/", {"text": "长" * 4001}, "Invalid input: text"),
    ],
)
def test_bad_input_changes_nothing_and_says_why(
    client: Client, character, path: str, data: dict[str, str], error: str
) -> None:
    reflection = make_reflection(character=character, status=Reflection.Status.CONFIRMED)
    before, seq = state(character), last_event_seq()
    response = client.post(PAGE + path.format(id=reflection.reflection_id), data, follow=True)
    assert response.status_code == 200 and response.redirect_chain[-1][0] == PAGE
    assert error in response.content.decode()
    assert 'class="error"' in response.content.decode()
    assert state(character) == before and events_since(character.pk, seq) == []


def test_the_redirect_never_leaves_the_page(client: Client, character) -> None:
    reflection = make_reflection(character=character)
    response = client.post(f"{PAGE}{reflection.reflection_id}/confirm/", {"next": "https://evil.example/"})
    assert response.status_code == 302 and response["Location"] == PAGE


def test_a_post_without_the_csrf_token_is_refused(character) -> None:
    reflection = make_reflection(character=character)
    strict = Client(enforce_csrf_checks=True)
    for verb, data in (("confirm", {}), ("edit", {"text": "改过的文本"})):
        response = strict.post(f"{PAGE}{reflection.reflection_id}/{verb}/", data)
        assert response.status_code == 403, verb
    reflection.refresh_from_db()
    assert reflection.status == Reflection.Status.PENDING and reflection.text.startswith("主人似乎")


def test_an_unknown_character_is_a_404(client: Client) -> None:
    assert client.get("/browse/nobody/reflections/").status_code == 404
    assert client.post("/browse/nobody/reflections/ref_x/confirm/").status_code == 404


def test_the_page_answers_get_only_and_actions_post_only(client: Client, character) -> None:
    reflection = make_reflection(character=character)
    assert client.post(PAGE).status_code == 405
    assert client.get(f"{PAGE}{reflection.reflection_id}/confirm/").status_code == 405
