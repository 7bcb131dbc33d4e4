from __future__ import annotations

import json

import pytest

from nekomem.characters.models import Character
from nekomem.characters.names import InvalidCharacterName, validate_character_name


@pytest.mark.parametrize("name", ["小天", "Tian", "neko-chan_2", "ネコ", "a" * 64])
def test_valid_names_pass_unchanged(name):
    assert validate_character_name(name) == name


@pytest.mark.parametrize(
    "name", ["", " ", ".", "..", "a/b", "a\\b", "tab\there", "nul\x00", "a" * 65, " lead", "zero\u200bwidth"]
)
def test_invalid_names_are_refused(name):
    with pytest.raises(InvalidCharacterName):
        validate_character_name(name)


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["..", "%2E%2E", "a%2Fb", "x%00y", "a" * 65, "%20"])
def test_every_route_refuses_invalid_names_and_creates_nothing(client, name):
    body = json.dumps({"input_history": "[]"})
    for route in ("cache", "process", "renew", "settle"):
        response = client.post(f"/{route}/{name}", data=body, content_type="application/json")
        assert response.status_code in (400, 404), route
        if response.status_code == 400:
            assert response.json()["error_code"] == "invalid_character_name"
    for route in ("new_dialog", "get_recent_history", "last_conversation_gap"):
        assert client.get(f"/{route}/{name}").status_code in (400, 404), route
    assert Character.objects.count() == 0


@pytest.mark.django_db
def test_first_cache_for_a_valid_unknown_name_creates_the_character(client, post_history):
    assert post_history("cache", "新角色", ("human", "你好")).json()["count"] == 1
    assert Character.objects.filter(name="新角色").exists()


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["api", "API", "health", "new_dialog", "prompt-locale", "internal"])
def test_a_reserved_route_name_is_refused_with_400(client, name):
    body = json.dumps({"input_history": json.dumps([{"type": "human", "data": {"content": "hi"}}])})
    response = client.post(f"/cache/{name}", data=body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error_code"] == "invalid_character_name"
    assert "reserved" in response.json()["message"]
    assert not Character.objects.filter(name=name).exists()


def _route_heads(resolver, prefix: str = "") -> set[str]:
    heads: set[str] = set()
    for pattern in resolver.url_patterns:
        route = prefix + str(pattern.pattern)
        if hasattr(pattern, "url_patterns"):
            heads |= _route_heads(pattern, route)
        else:
            heads.add(route.split("/")[0].split("<")[0])
    return heads - {""}


def test_every_top_level_route_name_is_reserved():
    from django.urls import get_resolver

    from nekomem.characters.names import RESERVED_NAMES

    assert _route_heads(get_resolver()) <= RESERVED_NAMES
