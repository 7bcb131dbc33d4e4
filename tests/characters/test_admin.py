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

    refused = admin_client.post(url, {**base, "name": "a/b", "card": '{"master": "not an object"}'})
    assert refused.status_code == 200 and refused.context["adminform"].form.errors.keys() >= {"name", "card"}

    saved = admin_client.post(url, {**base, "master_nicknames": '["主人"]', "memory_version": "99"})
    assert saved.status_code == 302
    character.refresh_from_db()
    assert (character.name, character.master_nicknames, character.memory_version) == ("小天", ["主人"], 0)
    assert Character.objects.count() == 1
