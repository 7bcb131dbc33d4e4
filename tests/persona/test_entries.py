from __future__ import annotations

import math
from datetime import timedelta

import pytest
from django.utils import timezone

from nekomem.characters.models import Character
from persona.models import PersonaCorrection, PersonaEntry, PersonaState
from persona.services import persona_ensure, persona_entry_create, persona_entry_edit
from persona.services.records import card_entry_id, legacy_entry_id, score_of, sha8
from tests.persona.factories import cached_tokens_are_fresh, make_entry

pytestmark = pytest.mark.django_db


def test_card_fields_become_protected_entries_with_card_ids(character: Character):
    persona_ensure(character_id=character.pk)
    cards = {e.entry_id: e for e in PersonaEntry.objects.filter(character=character, protected=True)}
    assert set(cards) == {
        card_entry_id("master", "昵称"),
        card_entry_id("master", "职业"),
        card_entry_id("neko", "性格"),
    }
    nickname = cards[card_entry_id("master", "昵称")]
    assert nickname.entry_id == "card_" + sha8("master:昵称")
    assert (nickname.text, nickname.source, nickname.section) == ("昵称: 阿凛", "character_card", "master")
    assert score_of(nickname, now=timezone.now()) == math.inf
    assert cached_tokens_are_fresh(nickname)


def test_card_changes_are_mirrored_on_the_next_ensure(character: Character):
    persona_ensure(character_id=character.pk)
    character.card = {"master": {"昵称": "凛凛"}}
    character.save()
    persona_ensure(character_id=character.pk)
    texts = list(
        PersonaEntry.objects.filter(character=character, protected=True).values_list("text", flat=True)
    )
    assert texts == ["昵称: 凛凛"]


def test_legacy_settings_migrate_once_into_legacy_entries(character: Character):
    PersonaState.objects.create(character=character, legacy_settings={"master": {"生日": "三月"}})
    persona_ensure(character_id=character.pk)
    entry = PersonaEntry.objects.get(character=character, source="settings")
    assert entry.entry_id == legacy_entry_id("生日: 三月")
    entry.delete()  # the user removed it afterwards: a second ensure must not bring it back
    persona_ensure(character_id=character.pk)
    assert not PersonaEntry.objects.filter(character=character, source="settings").exists()


def test_an_add_overlapping_a_card_entry_is_rejected(character: Character):
    result = persona_entry_create(character_id=character.pk, entity="neko", text="性格温柔又黏人")
    assert result.outcome == "rejected_card"
    assert not PersonaEntry.objects.filter(character=character, protected=False).exists()


def test_an_add_overlapping_another_entry_queues_one_correction(character: Character):
    make_entry(character=character, text="主人每天早上喝冰美式咖啡")
    first = persona_entry_create(
        character_id=character.pk, entity="master", text="主人每天早上改喝热美式咖啡"
    )
    again = persona_entry_create(
        character_id=character.pk, entity="master", text="主人每天早上改喝热美式咖啡"
    )
    assert first.outcome == again.outcome == "queued_correction"
    assert PersonaCorrection.objects.filter(character=character).count() == 1


def test_an_unrelated_add_gets_a_manual_id(character: Character):
    make_entry(character=character, text="主人每天早上喝冰美式咖啡")
    result = persona_entry_create(character_id=character.pk, entity="master", text="主人养了一只叫团子的猫")
    assert result.outcome == "added" and result.entry is not None
    assert result.entry.entry_id.startswith("manual_") and result.entry.entry_id.endswith(
        sha8("主人养了一只叫团子的猫")
    )


def test_edits_keep_at_most_five_versions(character: Character):
    entry = make_entry(character=character, text="v0")
    start = timezone.now()
    for n in range(1, 8):
        persona_entry_edit(
            character_id=character.pk, entry_id=entry.entry_id, text=f"v{n}", now=start + timedelta(minutes=n)
        )
    entry.refresh_from_db()
    assert entry.text == "v7"
    assert [v["text"] for v in entry.version_history] == ["v2", "v3", "v4", "v5", "v6"]
    assert cached_tokens_are_fresh(entry)


def test_the_same_text_in_two_sections_within_one_second_gets_two_ids(character: Character):
    now = timezone.now()
    first = persona_entry_create(character_id=character.pk, entity="master", text="喜欢下雨天", now=now)
    second = persona_entry_create(
        character_id=character.pk, entity="relationship", text="喜欢下雨天", now=now
    )
    assert first.outcome == second.outcome == "added"
    assert first.entry is not None and second.entry is not None
    assert second.entry.entry_id == f"{first.entry.entry_id}_2"
