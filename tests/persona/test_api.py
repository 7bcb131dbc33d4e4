from __future__ import annotations

import pytest

from persona.models import PersonaCorrection, PersonaEntry
from persona.services import persona_ensure
from persona.services.records import card_entry_id
from tests.persona.factories import make_entry

pytestmark = pytest.mark.django_db


def base(character) -> str:
    return f"/api/v1/characters/{character.name}/persona/"


def test_add_edit_and_delete_through_the_api(client, character):
    response = client.post(
        base(character) + "entries/",
        {"entity": "master", "text": "主人会做提拉米苏"},
        content_type="application/json",
    )
    assert response.status_code == 201
    entry_id = response.json()["id"]
    edited = client.patch(
        base(character) + f"entries/{entry_id}/",
        {"text": "主人会做抹茶提拉米苏"},
        content_type="application/json",
    ).json()
    assert (
        edited["text"] == "主人会做抹茶提拉米苏"
        and edited["version_history"][0]["text"] == "主人会做提拉米苏"
    )
    deleted = client.delete(base(character) + f"entries/{entry_id}/")
    assert deleted.status_code == 200 and deleted.json()["removed"]["persona_entries"] == 1
    assert client.get(base(character) + f"entries/{entry_id}/").status_code == 404


def test_card_entries_are_read_only_and_score_null(client, character):
    persona_ensure(character_id=character.pk)
    card_id = card_entry_id("master", "昵称")
    listed = {row["id"]: row for row in client.get(base(character) + "entries/").json()["results"]}
    assert listed[card_id]["protected"] is True and listed[card_id]["evidence_score"] is None
    response = client.patch(
        base(character) + f"entries/{card_id}/", {"text": "x"}, content_type="application/json"
    )
    assert response.status_code == 409


def test_a_contradicting_add_is_refused_and_resolved_by_hand(client, character):
    make_entry(character=character, text="主人每天早上喝冰美式咖啡")
    response = client.post(
        base(character) + "entries/",
        {"entity": "master", "text": "主人每天早上改喝热美式咖啡"},
        content_type="application/json",
    )
    assert response.status_code == 409
    queued = client.get(base(character) + "corrections/").json()["results"]
    assert [q["new_text"] for q in queued] == ["主人每天早上改喝热美式咖啡"]
    resolved = client.post(
        base(character) + f"corrections/{queued[0]['id']}/resolve/",
        {"action": "merge", "text": "主人早上喝美式咖啡，冬天喝热的"},
        content_type="application/json",
    )
    assert resolved.status_code == 204 and not PersonaCorrection.objects.exists()
    texts = [
        row["text"]
        for row in client.get(base(character) + "entries/").json()["results"]
        if not row["protected"]
    ]
    assert texts == ["主人早上喝美式咖啡，冬天喝热的"]


MEMBER = "group_participant:qq:7788:1001"


def _ids(response) -> list[str]:
    rows = response.json()
    rows = rows["results"] if isinstance(rows, dict) else rows
    return sorted(r["id"] for r in rows)


def test_the_list_takes_the_subject_filter_and_a_subjects_entry_is_reached_by_id(client, character):
    master = make_entry(character=character, text="主人收藏邮票")
    member = make_entry(character=character, section=f"@subject/{MEMBER}", text="群友1001住在海边")
    url = base(character) + "entries/"
    assert _ids(client.get(url)) == [master.entry_id]
    assert _ids(client.get(url, {"subject": "all"})) == sorted([master.entry_id, member.entry_id])
    assert _ids(client.get(url, {"subject": MEMBER})) == [member.entry_id]
    assert _ids(client.get(url, {"subject": MEMBER, "archived": "true"})) == []
    refused = client.get(url, {"subject": "no-colon"})
    assert refused.status_code == 400 and "subject" in refused.json()["errors"]

    one = url + f"{member.entry_id}/"
    retrieved = client.get(one).json()
    assert (retrieved["text"], retrieved["subject_key"], retrieved["entity"]) == (
        "群友1001住在海边",
        MEMBER,
        f"@subject/{MEMBER}",
    )
    edited = client.patch(one, {"text": "群友1001住在海岛上"}, content_type="application/json")
    assert edited.status_code == 200 and edited.json()["text"] == "群友1001住在海岛上"
    assert PersonaEntry.with_subjects.get(pk=member.pk).text == "群友1001住在海岛上"
    assert client.delete(one).status_code == 200
    assert not PersonaEntry.with_subjects.filter(pk=member.pk).exists()
    assert client.get(one).status_code == 404
    assert PersonaEntry.objects.filter(pk=master.pk).exists()
