"""The browser's import panel: upload a workspace zip, see the preview, import it."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from facts.models import Fact
from persona.models import PersonaEntry
from tests.characters.factories import CharacterFactory
from tests.support.llm_server import json_content

pytestmark = pytest.mark.django_db

ZIP = Path(__file__).resolve().parent.parent / "fixtures" / "hermes_workspace.zip"
URL = "/browse/小八/markdown-import/"


def test_preview_then_import(client: Client, llm_server) -> None:
    CharacterFactory(name="小八")
    upload = SimpleUploadedFile("ws.zip", ZIP.read_bytes(), content_type="application/zip")
    page = client.post(URL, {"workspace": upload, "source_format": "hermes", "action": "preview"})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-testid="import-preview"' in html and "主人对花生过敏" in html and "2026-11-01" in html
    assert not Fact.objects.exists()  # a preview stores nothing
    llm_server.script(json_content(["主人小林住在杭州"]), json_content(["I am Hachi"]))
    done = client.post(URL, {"action": "import", "payload": page.context["payload"]})
    assert done.status_code == 200
    assert done.context["report"].added_facts == 4 and done.context["report"].added_persona == 2
    assert PersonaEntry.objects.filter(source="external_import").count() == 2


def test_a_lost_preview_is_an_error_message_not_a_crash(client: Client) -> None:
    CharacterFactory(name="小八")
    page = client.post(URL, {"action": "import", "payload": "not json"})
    assert page.status_code == 200 and "Import failed" in page.content.decode()
    assert not Fact.objects.exists()
