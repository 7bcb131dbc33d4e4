"""``instance_get``: a hot read by one unique field gives the instance ``filter(...).first()`` gives."""

from __future__ import annotations

import pytest
from django.forms.models import model_to_dict

from nekomem.characters.models import Character
from nekomem.statements import instance_get
from persona.models import PersonaState
from tests.characters.factories import CharacterFactory

pytestmark = pytest.mark.django_db


def every_field(instance) -> dict:
    return {field.attname: getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields}


def test_a_character_by_name_and_by_id_has_every_field_the_orm_loads() -> None:
    CharacterFactory.create(name="other")
    mel = CharacterFactory.create(
        name="小天 Mel",
        master_name="主人",
        master_nicknames=["喵", "boss"],
        card={"性格": "温柔"},
        language="zh",
    )
    Character.objects.filter(pk=mel.pk).update(memory_version=41)
    expected = Character.objects.filter(name="小天 Mel").first()
    by_name = instance_get(Character, by="name", value="小天 Mel")
    by_id = instance_get(Character, by="id", value=mel.pk)
    assert by_name is not None and by_id is not None
    assert every_field(by_name) == every_field(by_id) == every_field(expected)
    assert by_name.memory_version == 41 and by_name.created_at.tzinfo is not None
    assert not by_name._state.adding  # a loaded row: save() updates it
    assert instance_get(Character, by="name", value="nobody") is None


def test_a_row_by_its_one_to_one_key() -> None:
    mel = CharacterFactory.create()
    assert instance_get(PersonaState, by="character", value=mel.pk) is None
    PersonaState.objects.create(character=mel, card_sha256="ab" * 32, legacy_settings={"猫": ["喜欢鱼"]})
    state = instance_get(PersonaState, by="character", value=mel.pk)
    assert state is not None
    assert model_to_dict(state) == model_to_dict(PersonaState.objects.get(character=mel))
    assert state.legacy_settings == {"猫": ["喜欢鱼"]} and state.legacy_migrated is False
