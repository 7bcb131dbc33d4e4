"""/api/v1/characters/{name}/: export and import as a zip, rename, delete with a confirmation."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import call_command

from facts.models import Fact
from nekomem.characters.models import Character
from tests.characters.factories import CharacterFactory
from tests.portability.layout import FILES, FIXTURE, NAME, database_snapshot, file_contents, fixture_zip

pytestmark = pytest.mark.django_db
API = "/api/v1/characters"


def post_json(client, url: str, body: dict):
    return client.post(url, data=json.dumps(body, ensure_ascii=False), content_type="application/json")


def import_body(archive: bytes) -> dict[str, str]:
    return {"archive": base64.b64encode(archive).decode()}


def test_export_is_a_zip_of_the_original_layout(client, tmp_path: Path):
    call_command("import_memory", str(FIXTURE), verbosity=0)
    response = client.get(f"{API}/{NAME}/export/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/zip"
    assert "attachment" in response["Content-Disposition"] and ".zip" in response["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content))) as zipped:
        zipped.extractall(tmp_path)
    for name in FILES:
        assert file_contents(tmp_path / NAME, name) == file_contents(FIXTURE / NAME, name), name


def test_export_of_an_unknown_character_is_404(client):
    response = client.get(f"{API}/无名氏/export/")
    assert response.status_code == 404 and response.json()["status"] == "error"


@pytest.mark.parametrize("top", [NAME, "whatever-folder", None], ids=["export", "other folder", "flat"])
def test_import_of_a_zip_then_again_changes_nothing(client, top):
    first = post_json(client, f"{API}/Mochi/import/", import_body(fixture_zip(top)))
    assert first.status_code == 200, first.content
    report = first.json()
    assert report["name"] == "Mochi" and report["created"] is True
    assert {f["filename"] for f in report["files"]} == set(FILES)
    facts = next(f for f in report["files"] if f["filename"] == "facts.json")
    assert facts["created"] == 9
    before = database_snapshot()
    again = post_json(client, f"{API}/Mochi/import/", import_body(fixture_zip(top)))
    assert again.json() == {"name": "Mochi", "created": False, "files": []}
    assert database_snapshot() == before


def test_import_refuses_a_malformed_file_by_name(client):
    buffer = io.BytesIO()
    with zipfile.ZipFile(fixture_zip_stream()) as source, zipfile.ZipFile(buffer, "w") as broken:
        for info in source.infolist():
            data = b'[{"id": "fact_x"}]' if info.filename.endswith("/facts.json") else source.read(info)
            broken.writestr(info.filename, data)
    response = post_json(client, f"{API}/Mochi/import/", import_body(buffer.getvalue()))
    assert response.status_code == 400
    body = response.json()
    assert body["error_code"] == "malformed_memory"
    assert any(p.startswith("Mochi/facts.json, entry #0 (fact_x)") for p in body["problems"]), body
    assert not Character.objects.exists() and not Fact.objects.exists()


def fixture_zip_stream() -> io.BytesIO:
    return io.BytesIO(fixture_zip())


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"archive": "%%% not base64 %%%"}, "archive"),
        ({}, "archive"),
    ],
)
def test_import_refuses_a_body_that_is_not_a_zip_in_base64(client, body, field):
    response = post_json(client, f"{API}/Mochi/import/", body)
    assert response.status_code == 400 and field in response.json()["errors"]
    assert not Character.objects.exists()


def test_import_refuses_a_file_that_is_not_a_zip_or_holds_no_memory(client):
    not_zip = post_json(client, f"{API}/Mochi/import/", import_body(b"PK? no"))
    assert not_zip.status_code == 400 and "not a zip" in not_zip.json()["message"]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zipped:
        zipped.writestr("README.md", "hello")
        zipped.writestr("../../facts.json", "[]")  # a path leaving the directory is never unpacked
    empty = post_json(client, f"{API}/Mochi/import/", import_body(buffer.getvalue()))
    assert empty.status_code == 400 and "no file of the memory layout" in empty.json()["message"]
    assert not Character.objects.exists()


def test_import_under_an_invalid_name_is_400(client):
    response = post_json(client, f"{API}/%20x/import/", import_body(fixture_zip()))
    assert response.status_code == 400
    assert not Character.objects.exists()


def test_the_api_takes_no_multipart_upload(client):
    response = client.post(f"{API}/Mochi/import/", {"archive": io.BytesIO(fixture_zip())})
    assert response.status_code == 415  # JSON bodies only; the browser's upload lives under /browse/


def test_rename(client):
    CharacterFactory.create(name=NAME)
    response = post_json(client, f"{API}/{NAME}/rename/", {"new_name": "Mochi"})
    assert response.status_code == 200 and response.json()["name"] == "Mochi"
    assert list(Character.objects.values_list("name", flat=True)) == ["Mochi"]


def test_rename_onto_an_existing_name_is_409_and_changes_nothing(client):
    call_command("import_memory", str(FIXTURE), verbosity=0)
    CharacterFactory.create(name="Mochi")
    before = database_snapshot()
    response = post_json(client, f"{API}/{NAME}/rename/", {"new_name": "Mochi"})
    assert response.status_code == 409 and response.json()["error_code"] == "conflict"
    assert database_snapshot() == before


@pytest.mark.parametrize(
    ("name", "body", "status"),
    [("无名氏", {"new_name": "x"}, 404), (NAME, {"new_name": "a/b"}, 400), (NAME, {}, 400)],
)
def test_rename_errors(client, name, body, status):
    CharacterFactory.create(name=NAME)
    response = post_json(client, f"{API}/{name}/rename/", body)
    assert response.status_code == status
    assert Character.objects.get().name == NAME


def test_patching_the_name_renames_through_the_service(client):
    CharacterFactory.create(name=NAME, master_name="阿凛")
    response = client.patch(
        f"{API}/{NAME}/",
        data=json.dumps({"name": "Mochi", "master_name": "Rin"}),
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    character = Character.objects.get()
    assert (character.name, character.master_name) == ("Mochi", "Rin")
    assert character.memory_version > 0


def test_delete_asks_for_the_name_and_says_what_would_be_lost(client):
    call_command("import_memory", str(FIXTURE), verbosity=0)
    refused = client.delete(f"{API}/{NAME}/")
    assert refused.status_code == 400
    body = refused.json()
    assert body["error_code"] == "confirmation_required"
    assert body["would_delete"]["facts"]["fact"] == 11
    wrong = client.delete(f"{API}/{NAME}/?confirm=Mochi")
    assert wrong.status_code == 400 and Character.objects.filter(name=NAME).exists()

    deleted = client.delete(f"{API}/{NAME}/?confirm={NAME}")
    assert deleted.status_code == 200
    assert deleted.json()["deleted"] == body["would_delete"]
    assert not Character.objects.exists() and not Fact.objects.exists()
    assert client.delete(f"{API}/{NAME}/?confirm={NAME}").status_code == 404
