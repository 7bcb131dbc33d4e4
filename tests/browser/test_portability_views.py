"""The memory browser's zip download and upload (nekomem/browser/portability_views.py)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from django.contrib.messages import get_messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client

from facts.models import Fact
from nekomem.characters.models import Character
from tests.characters.factories import CharacterFactory
from tests.portability.layout import FILES, FIXTURE, NAME, database_snapshot, file_contents, fixture_zip

pytestmark = pytest.mark.django_db
REMOTE_ADDR = "192.0.2.7"  # off loopback


def upload(client: Client, name: str, archive: bytes, *, remote_addr: str = "127.0.0.1"):
    return client.post(
        f"/browse/{name}/import/",
        {"archive": SimpleUploadedFile("memory.zip", archive, content_type="application/zip")},
        REMOTE_ADDR=remote_addr,
    )


def shown(response) -> list[str]:
    return [str(m) for m in get_messages(response.wsgi_request)]


def test_the_download_is_the_export(client: Client, tmp_path: Path) -> None:
    call_command("import_memory", str(FIXTURE), verbosity=0)
    response = client.get(f"/browse/{NAME}/export.zip")
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(response.getvalue())) as zipped:
        zipped.extractall(tmp_path)
    for name in FILES:
        assert file_contents(tmp_path / NAME, name) == file_contents(FIXTURE / NAME, name), name
    assert client.get("/browse/nobody/export.zip").status_code == 404


def test_an_upload_imports_and_a_second_one_changes_nothing(client: Client) -> None:
    CharacterFactory.create(name=NAME)
    first = upload(client, NAME, fixture_zip())
    assert first.status_code == 302 and first["Location"] == "/browse/%E5%B0%8F%E5%A4%A9/"
    assert any("已导入 Imported" in m and "facts.json +9" in m for m in shown(first))
    assert Fact.objects.count() == 11
    before = database_snapshot()
    again = upload(client, NAME, fixture_zip())
    assert any("Nothing changed" in m for m in shown(again))
    assert database_snapshot() == before


def test_an_upload_can_bring_a_new_character(client: Client) -> None:
    response = upload(client, "Mochi", fixture_zip())
    assert response["Location"] == "/browse/Mochi/"
    assert Character.objects.get().name == "Mochi"


def test_a_malformed_file_is_named_and_nothing_is_imported(client: Client) -> None:
    CharacterFactory.create(name=NAME)
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(fixture_zip())) as source, zipfile.ZipFile(buffer, "w") as broken:
        for info in source.infolist():
            data = b"{" if info.filename.endswith("/surfaced.json") else source.read(info)
            broken.writestr(info.filename, data)
    before = database_snapshot()
    response = upload(client, NAME, buffer.getvalue())
    assert response.status_code == 302
    messages = shown(response)
    assert any("Nothing was imported" in m and f"{NAME}/surfaced.json: invalid JSON" in m for m in messages)
    assert database_snapshot() == before


def test_an_upload_that_is_not_a_zip_or_no_upload_at_all(client: Client) -> None:
    CharacterFactory.create(name=NAME)
    assert any("not a zip" in m for m in shown(upload(client, NAME, b"hello")))
    missing = client.post(f"/browse/{NAME}/import/", {})
    assert any("Choose a zip file" in m for m in shown(missing))
    assert Fact.objects.count() == 0


def test_the_upload_needs_the_csrf_token_and_off_loopback_a_login() -> None:
    CharacterFactory.create(name=NAME)
    strict = Client(enforce_csrf_checks=True)
    assert upload(strict, NAME, fixture_zip()).status_code == 403
    remote = upload(Client(), NAME, fixture_zip(), remote_addr=REMOTE_ADDR)
    assert remote.status_code == 302 and remote["Location"].startswith("/admin/login/")
    download = Client().get(f"/browse/{NAME}/export.zip", REMOTE_ADDR=REMOTE_ADDR)
    assert download["Location"].startswith("/admin/login/")
    assert Fact.objects.count() == 0
