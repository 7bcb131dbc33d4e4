"""The browser's frame: the front door lists characters; off loopback it asks for the admin's login."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.characters.factories import CharacterFactory

pytestmark = pytest.mark.django_db

REMOTE: dict[str, Any] = {"REMOTE_ADDR": "192.0.2.7", "HTTP_HOST": "127.0.0.1"}


def test_the_front_door_lists_each_character_with_a_link_to_its_pages(client: Client) -> None:
    long_name = "很长的名字" * 12
    CharacterFactory.create(name="小天")
    CharacterFactory.create(name=long_name)
    page = client.get("/")
    assert page.status_code == 200
    body = page.content.decode()
    assert 'href="/browse/%E5%B0%8F%E5%A4%A9/"' in body
    assert long_name in body
    overview = client.get("/browse/小天/")
    assert overview.status_code == 200 and "小天" in overview.content.decode()


def test_an_unknown_character_is_a_404_page(client: Client) -> None:
    assert client.get("/browse/nobody/").status_code == 404


def test_off_loopback_the_browser_asks_for_a_staff_login(client: Client) -> None:
    CharacterFactory.create(name="小天")
    for path in ("/", "/browse/小天/"):
        answer = client.get(path, **REMOTE)
        assert answer.status_code == 302 and answer["Location"].startswith("/admin/login/"), path
    staff = get_user_model().objects.create_user("keeper", password="pw-keeper-1", is_staff=True)
    client.force_login(staff)
    assert client.get("/", **REMOTE).status_code == 200
    assert client.get("/browse/小天/", **REMOTE).status_code == 200


def test_off_loopback_a_signed_in_user_who_is_not_staff_is_still_sent_to_the_login(client: Client) -> None:
    user = get_user_model().objects.create_user("visitor", password="pw-visitor-1")
    client.force_login(user)
    assert client.get("/", **REMOTE).status_code == 302


def test_the_front_door_offers_to_import_a_new_character(client: Client) -> None:
    body = client.get("/").content.decode()
    form = body.split('data-testid="new-character-import"', 1)[1].split("</form>", 1)[0]
    assert 'data-action-template="/browse/__name__/import/"' in form
    assert 'name="archive"' in form and 'name="name"' in form and "csrfmiddlewaretoken" in form
