"""Characters in the admin: the REST API's fields and checks, nothing the services own."""

from __future__ import annotations

from typing import cast

import pytest
from django.test import Client
from django.urls import reverse

from nekomem.characters.models import Character
from tests.characters.factories import CharacterFactory

pytestmark = pytest.mark.django_db


def test_an_admin_edit_is_checked_like_an_api_edit(admin_client: Client) -> None:
    character = cast(Character, CharacterFactory(name="小天"))
    url = reverse("admin:characters_character_change", args=[character.pk])
    base = {"name": "小天", "master_name": "阿凛", "master_nicknames": "[]", "card": "{}"}

    refused = admin_client.post(url, {**base, "card": '{"master": "not an object"}'})
    assert refused.status_code == 200 and refused.context["adminform"].form.errors.keys() >= {"card"}

    saved = admin_client.post(url, {**base, "master_nicknames": '["主人"]', "memory_version": "99"})
    assert saved.status_code == 302
    character.refresh_from_db()
    assert (character.name, character.master_nicknames, character.memory_version) == ("小天", ["主人"], 0)
    assert Character.objects.count() == 1


def test_the_admin_does_not_rename_a_character_behind_the_services(admin_client: Client) -> None:
    character = cast(Character, CharacterFactory(name="小天"))
    url = reverse("admin:characters_character_change", args=[character.pk])
    base = {"name": "小雨", "master_name": "阿凛", "master_nicknames": "[]", "card": "{}"}
    assert admin_client.post(url, base).status_code == 302
    character.refresh_from_db()
    assert character.name == "小天"  # a rename goes through character_rename (browser, REST API)


def test_a_new_characters_name_is_checked_in_the_admin(admin_client: Client) -> None:
    url = reverse("admin:characters_character_add")
    base = {"name": "a/b", "master_name": "阿凛", "master_nicknames": "[]", "card": "{}"}
    refused = admin_client.post(url, base)
    assert refused.status_code == 200 and "name" in refused.context["adminform"].form.errors
    assert not Character.objects.exists()
