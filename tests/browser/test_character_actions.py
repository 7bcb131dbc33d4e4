"""Rename and delete on a character's overview page (nekomem/browser/views.py)."""

from __future__ import annotations

import pytest
from django.contrib.messages import get_messages
from django.core.management import call_command
from django.test import Client

from facts.models import Fact
from nekomem.characters.models import Character
from tests.characters.factories import CharacterFactory
from tests.portability.layout import FIXTURE, NAME, database_snapshot

pytestmark = pytest.mark.django_db


def shown(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_the_overview_offers_export_import_rename_and_delete(client: Client) -> None:
    CharacterFactory.create(name=NAME)
    body = client.get(f"/browse/{NAME}/").content.decode()
    for marker in (
        'data-testid="export-link"',
        'data-testid="import-form"',
        'data-testid="rename-form"',
        'data-testid="delete-link"',
        'enctype="multipart/form-data"',
        "csrfmiddlewaretoken",
    ):
        assert marker in body, marker


def test_rename_goes_to_the_new_overview(client: Client) -> None:
    call_command("import_memory", str(FIXTURE), verbosity=0)
    response = client.post(f"/browse/{NAME}/rename/", {"new_name": "Mochi 喵"})
    assert response.status_code == 302 and response["Location"] == "/browse/Mochi%20%E5%96%B5/"
    assert any("Renamed to Mochi 喵" in m for m in shown(response))
    assert Fact.objects.filter(character__name="Mochi 喵").count() == 11
    assert client.get("/browse/Mochi 喵/").status_code == 200


@pytest.mark.parametrize(
    ("new_name", "said"), [("Mochi", "exists, nothing changed"), ("a/b", "Invalid new name")]
)
def test_a_refused_rename_says_why_and_changes_nothing(client: Client, new_name: str, said: str) -> None:
    call_command("import_memory", str(FIXTURE), verbosity=0)
    CharacterFactory.create(name="Mochi")
    before = database_snapshot()
    response = client.post(f"/browse/{NAME}/rename/", {"new_name": new_name})
    assert response["Location"] == "/browse/%E5%B0%8F%E5%A4%A9/"
    assert any(said in m for m in shown(response))
    assert database_snapshot() == before


def test_the_delete_page_names_what_is_lost_and_offers_the_export(client: Client) -> None:
    call_command("import_memory", str(FIXTURE), verbosity=0)
    page = client.get(f"/browse/{NAME}/delete/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "/browse/%E5%B0%8F%E5%A4%A9/export.zip" in body
    footprint = page.context["footprint"]
    assert footprint.as_dict()["facts"]["fact"] == 11
    assert ">11<" in body and str(footprint.total) in body
    assert "事实 Facts" in body and "人设 Persona" in body


def test_delete_needs_the_name_typed_again(client: Client) -> None:
    call_command("import_memory", str(FIXTURE), verbosity=0)
    wrong = client.post(f"/browse/{NAME}/delete/", {"confirm_name": "小"})
    assert any("does not match" in m for m in shown(wrong))
    assert Character.objects.filter(name=NAME).exists() and Fact.objects.count() == 11

    done = client.post(f"/browse/{NAME}/delete/", {"confirm_name": NAME})
    assert done.status_code == 302 and done["Location"] == "/"
    assert any(f"Deleted {NAME}" in m for m in shown(done))
    assert not Character.objects.exists() and not Fact.objects.exists()
    assert client.get(f"/browse/{NAME}/delete/").status_code == 404
