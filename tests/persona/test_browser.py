"""The memory browser's persona page: entries by section, the corrections queue, and every action."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone

from nekomem.characters.models import Character
from persona.models import PersonaCorrection, PersonaEntry
from persona.selectors import persona_file_view
from persona.services import persona_ensure, persona_entry_edit
from persona.services.entries import correction_enqueue
from persona.services.records import card_entry_id
from tests.characters.factories import CharacterFactory
from tests.persona.factories import make_entry
from tests.support.comparable import comparable, events_since, last_event_seq

pytestmark = pytest.mark.django_db

PAGE = "/browse/%E5%B0%8F%E5%A4%A9/persona/"  # as the page links to itself
API = "/api/v1/characters/小地/persona/"
CARD_NICKNAME = card_entry_id("master", "昵称")


def state(character: Character) -> Any:
    corrections = PersonaCorrection.objects.filter(character=character).order_by("pk")
    return comparable(
        {
            "persona": persona_file_view(character_id=character.pk),
            "corrections": list(corrections.values("old_text", "new_text", "entity", "resolve_attempts")),
        }
    )


def queue(character: Character, old: str, new: str) -> PersonaCorrection:
    with transaction.atomic():
        correction = correction_enqueue(
            character_id=character.pk, old_text=old, new_text=new, entity="master", now=timezone.now()
        )
    assert correction is not None
    return correction


def twins(character: Character, *texts: str) -> Character:
    """A second character with the same card and the same manual entries, for the REST API."""
    other = CharacterFactory.create(name="小地", master_name=character.master_name, card=character.card)
    for who in (character, other):
        persona_ensure(character_id=who.pk)
        for n, text in enumerate(texts):
            make_entry(character=who, text=text, entry_id=f"manual_20260101000000_{n:08x}", position=10 + n)
    return other


def page_text(client: Client, **params: str) -> str:
    response = client.get(PAGE, params)
    assert response.status_code == 200
    return response.content.decode()


def test_entries_by_section_with_the_card_badge_evidence_and_history(client: Client, character) -> None:
    persona_ensure(character_id=character.pk)  # the three sections, in the file's order
    entry = make_entry(character=character, text="主人喜欢喝乌龙茶", reinforcement=1.5, disputation=0.25)
    persona_entry_edit(character_id=character.pk, entry_id=entry.entry_id, text="主人喜欢喝冻顶乌龙")
    make_entry(character=character, section="relationship", text="一起看过三次日出")
    body = page_text(client)
    assert body.index('data-section="master"') < body.index('data-section="neko"')
    assert body.index('data-section="neko"') < body.index('data-section="relationship"')
    card_row = body[body.index(f'data-entry-id="{CARD_NICKNAME}"') :]
    assert "昵称: 阿凛" in card_row and 'data-testid="protected"' in card_row[: card_row.index("</tr>")]
    assert "Follows the card" in card_row[: card_row.index("</tr>")]
    row = body[body.index(f'data-entry-id="{entry.entry_id}"') :]
    row = row[: row.index("</tr>")]
    assert "主人喜欢喝冻顶乌龙" in row and 'data-testid="protected"' not in row
    assert "R 1.500" in row and "D 0.250" in row
    assert "Version history (1)" in row and "主人喜欢喝乌龙茶" in row and "manual_edit" in row
    assert 'class="active">人格 Persona<' in body


def test_the_layer_page_is_registered_with_its_count(client: Client, character) -> None:
    make_entry(character=character)
    overview = client.get("/browse/小天/").content.decode()
    assert f'href="{PAGE}"' in overview and "人格 Persona" in overview


def test_filters_by_section_and_text_and_pages_of_fifty(client: Client, character) -> None:
    for n in range(55):
        make_entry(character=character, text=f"主人的第{n:02d}个习惯", position=n)
    make_entry(character=character, section="neko", text="喜欢晒太阳")
    everything = page_text(client)
    assert "共 59 条" in everything  # 55 + the card's three + one neko entry
    assert "主人的第49个习惯" in everything and "主人的第50个习惯" not in everything
    second = page_text(client, page="2")
    assert "主人的第50个习惯" in second and "喜欢晒太阳" in second and "昵称: 阿凛" in second
    neko = page_text(client, section="neko")
    assert "喜欢晒太阳" in neko and "性格: 温柔 黏人" in neko and "主人的第" not in neko
    found = page_text(client, q="第07个")
    assert "主人的第07个习惯" in found and "共 1 条" in found
    assert "section=neko&amp;page=2" not in neko  # one page only
    filtered = page_text(client, q="习惯")
    assert "?q=%E4%B9%A0%E6%83%AF&amp;page=2" in filtered
    assert "共 59 条" in page_text(client, section="@nowhere")  # an unknown section filters nothing


def test_the_queue_shows_each_pair_with_the_four_resolutions(client: Client, character) -> None:
    entry = make_entry(character=character, text="主人住在上海")
    correction = queue(character, entry.text, "主人搬去了杭州")
    body = page_text(client)
    row = body[body.index(f'data-correction-id="{correction.pk}"') :]
    row = row[: row.index("</tr>")]
    assert "主人住在上海" in row and "主人搬去了杭州" in row
    for action in ("merge", "keep_new", "keep_old", "keep_both"):
        assert f'name="action" value="{action}"' in row


def browser_and_api(
    client: Client, character: Character, other: Character, browser: tuple[str, dict[str, str]], api: Any
) -> str:
    """Make the change both ways; the two characters' persona and events must come out the same."""
    seq = last_event_seq()
    path, data = browser
    response = client.post(PAGE + path, {**data, "next": PAGE + "?section=master"}, follow=True)
    assert response.redirect_chain == [(PAGE + "?section=master", 302)]
    mine = events_since(character.pk, seq)
    seq = last_event_seq()
    api()
    assert state(character) == state(other)
    assert mine == events_since(other.pk, seq) and mine
    return response.content.decode()


def test_add_edit_and_delete_change_what_the_rest_api_changes(client: Client, character) -> None:
    other = twins(character, "主人喜欢夏天")
    body = browser_and_api(
        client,
        character,
        other,
        ("entries/add/", {"entity": "master", "text": "主人会做提拉米苏"}),
        lambda: client.post(
            API + "entries/",
            {"entity": "master", "text": "主人会做提拉米苏"},
            content_type="application/json",
        ),
    )
    assert "已添加 Added: 主人会做提拉米苏" in body
    entry_id = "manual_20260101000000_00000000"
    body = browser_and_api(
        client,
        character,
        other,
        (f"entries/{entry_id}/edit/", {"text": "主人喜欢初夏"}),
        lambda: client.patch(
            f"{API}entries/{entry_id}/", {"text": "主人喜欢初夏"}, content_type="application/json"
        ),
    )
    assert "已保存 Saved" in body
    assert PersonaEntry.objects.get(character=character, entry_id=entry_id).version_history[0]["text"] == (
        "主人喜欢夏天"
    )
    body = browser_and_api(
        client,
        character,
        other,
        (f"entries/{entry_id}/delete/", {}),
        lambda: client.delete(f"{API}entries/{entry_id}/"),
    )
    assert "已删除 Deleted" in body
    assert not PersonaEntry.objects.filter(entry_id=entry_id).exists()


def test_a_contradicting_add_is_queued_as_the_rest_api_queues_it(client: Client, character) -> None:
    other = twins(character, "主人每天早上喝冰美式咖啡")
    text = "主人每天早上改喝热美式咖啡"
    body = browser_and_api(
        client,
        character,
        other,
        ("entries/add/", {"entity": "master", "text": text}),
        lambda: client.post(
            API + "entries/", {"entity": "master", "text": text}, content_type="application/json"
        ),
    )
    assert "Contradicts 「主人每天早上喝冰美式咖啡」; queued as a correction" in body
    assert PersonaCorrection.objects.get(character=character).new_text == text
    before = state(character)
    refused = client.post(PAGE + "entries/add/", {"entity": "master", "text": "昵称: 阿凛凛"}, follow=True)
    assert "Contradicts the card entry 「昵称: 阿凛」; not added" in refused.content.decode()
    assert state(character) == before


@pytest.mark.parametrize(
    ("action", "text", "expected"),
    [
        ("merge", "主人以前住上海，现在住杭州", {"主人以前住上海，现在住杭州"}),
        ("keep_new", "", {"主人搬去了杭州"}),
        ("keep_old", "", {"主人住在上海"}),
        ("keep_both", "", {"主人住在上海", "主人搬去了杭州"}),
    ],
)
def test_each_resolution_changes_what_the_rest_resolution_changes(
    client: Client, character, action: str, text: str, expected: set[str]
) -> None:
    other = twins(character, "主人住在上海")
    mine = queue(character, "主人住在上海", "主人搬去了杭州")
    theirs = queue(other, "主人住在上海", "主人搬去了杭州")
    body = browser_and_api(
        client,
        character,
        other,
        (f"corrections/{mine.pk}/resolve/", {"action": action, "text": text}),
        lambda: client.post(
            f"{API}corrections/{theirs.pk}/resolve/",
            {"action": action, "text": text},
            content_type="application/json",
        ),
    )
    assert 'class="success"' in body
    live = PersonaEntry.objects.filter(character=character, protected=False).values_list("text", flat=True)
    assert set(live) == expected and not PersonaCorrection.objects.filter(character=character).exists()


@pytest.mark.parametrize(
    ("path", "data", "error"),
    [
        (f"entries/{CARD_NICKNAME}/delete/", {}, "Character-card entries are protected"),
        (f"entries/{CARD_NICKNAME}/edit/", {"text": "昵称: 凛"}, "Character-card entries are protected"),
        ("entries/manual_nope/delete/", {}, "No such entry: manual_nope"),
        ("entries/manual_nope/edit/", {"text": "新的"}, "No such entry: manual_nope"),
        ("entries/{entry}/edit/", {"text": "   "}, "Invalid input: text"),
        ("entries/add/", {"entity": "master", "text": ""}, "Invalid input: text"),
        ("entries/add/", {"entity": "主人 的", "text": "有效的文本"}, "Invalid input: entity"),
        ("corrections/987654/resolve/", {"action": "keep_old"}, "no longer queued"),
        ("corrections/{correction}/resolve/", {"action": "drop_everything"}, "Invalid input: action"),
        ("corrections/{card_correction}/resolve/", {"action": "merge"}, "character-card entries"),
    ],
)
def test_bad_input_changes_nothing_and_says_why(
    client: Client, character, path: str, data: dict[str, str], error: str
) -> None:
    persona_ensure(character_id=character.pk)
    entry = make_entry(character=character, text="主人住在上海")
    correction = queue(character, entry.text, "主人搬去了杭州")
    card_correction = queue(character, "昵称: 阿凛", "昵称: 凛凛")
    before, seq = state(character), last_event_seq()
    target = path.format(entry=entry.entry_id, correction=correction.pk, card_correction=card_correction.pk)
    response = client.post(PAGE + target, data, follow=True)
    assert response.status_code == 200 and response.redirect_chain[-1][0] == PAGE
    body = response.content.decode()
    assert error in body and 'class="error"' in body
    assert state(character) == before and events_since(character.pk, seq) == []


def test_a_post_without_the_csrf_token_is_refused(character) -> None:
    entry = make_entry(character=character, text="主人住在上海")
    correction = queue(character, entry.text, "主人搬去了杭州")
    strict = Client(enforce_csrf_checks=True)
    for path, data in (
        ("entries/add/", {"entity": "master", "text": "主人会做饭"}),
        (f"entries/{entry.entry_id}/edit/", {"text": "主人住在北京"}),
        (f"entries/{entry.entry_id}/delete/", {}),
        (f"corrections/{correction.pk}/resolve/", {"action": "keep_new"}),
    ):
        assert strict.post(PAGE + path, data).status_code == 403, path
    assert list(PersonaEntry.objects.filter(character=character).values_list("text", flat=True)) == [
        "主人住在上海"
    ]
    assert PersonaCorrection.objects.filter(pk=correction.pk).exists()


def test_an_unknown_character_is_a_404(client: Client) -> None:
    assert client.get("/browse/nobody/persona/").status_code == 404
    assert (
        client.post("/browse/nobody/persona/entries/add/", {"entity": "master", "text": "x"}).status_code
        == 404
    )
