"""Archived persona entries can be browsed and restored, and a correction the resolver dropped after 5
attempts stays visible (REST and the memory browser) until a person resolves it (issue 35)."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone

from nekomem.journal.models import Event
from persona.models import PersonaArchiveShard, PersonaCorrection, PersonaEntry
from persona.portability import export_corrections
from persona.selectors import persona_file_view
from persona.services import persona_archive_sweep, persona_correction_resolve, persona_entry_restore
from persona.services.entries import correction_enqueue
from tests.persona.factories import make_entry

pytestmark = pytest.mark.django_db

API = "/api/v1/characters/小天/persona/"
PAGE = "/browse/%E5%B0%8F%E5%A4%A9/persona/"


def archived_entry(character, text: str = "主人讨厌下雨") -> PersonaEntry:
    start = timezone.now() - timedelta(days=14)
    make_entry(character=character, text="主人喜欢猫", position=0)
    entry = make_entry(character=character, text=text, disputation=1.0, disp_last_signal_at=start, position=1)
    for day in range(14):
        persona_archive_sweep(character_id=character.pk, now=start + timedelta(days=day))
    entry.refresh_from_db()
    assert entry.archive_shard_path
    return entry


def dropped_correction(character) -> PersonaCorrection:
    with transaction.atomic():
        correction = correction_enqueue(
            character_id=character.pk,
            old_text="主人喜欢下雨",
            new_text="主人讨厌下雨",
            entity="master",
            now=timezone.now(),
        )
    assert correction is not None
    PersonaCorrection.objects.filter(pk=correction.pk).update(resolve_attempts=5, dropped_at=timezone.now())
    correction.refresh_from_db()
    return correction


def test_restore_brings_the_entry_back_at_the_end_of_its_section(character):
    entry = archived_entry(character)
    shard = PersonaArchiveShard.objects.get(character=character)
    assert shard.size == 1 and entry.entry_id not in json.dumps(persona_file_view(character_id=character.pk))
    make_entry(character=character, text="主人周末去爬山", position=5)
    restored = persona_entry_restore(character_id=character.pk, entry_id=entry.entry_id)
    assert restored.archive_shard_path is None and restored.archived_at is None
    assert restored.sub_zero_days == 0 and restored.disputation == pytest.approx(1.0)  # evidence kept
    assert restored.position == 6
    shard.refresh_from_db()
    assert shard.size == 0
    assert entry.entry_id in json.dumps(persona_file_view(character_id=character.pk), ensure_ascii=False)
    event = Event.objects.filter(character=character, type="persona.entry_updated").last()
    assert event is not None and event.payload["reason"] == "manual_restore"
    assert "archive_shard_path" not in event.payload["entry"]


def test_rest_lists_archived_entries_and_restores_one(client: Client, character):
    entry = archived_entry(character)
    live = client.get(API + "entries/").json()["results"]
    assert entry.entry_id not in {row["id"] for row in live}
    archived = client.get(API + "entries/", {"archived": "true"}).json()["results"]
    assert [row["id"] for row in archived] == [entry.entry_id]
    assert archived[0]["archive_shard_path"] == entry.archive_shard_path
    response = client.post(API + f"entries/{entry.entry_id}/restore/", {}, content_type="application/json")
    assert response.status_code == 200 and response.json()["archive_shard_path"] is None
    assert client.get(API + "entries/", {"archived": "true"}).json()["results"] == []
    # Restoring it again is a conflict; an unknown id a 404; a bad filter a 400 — each with a JSON body.
    again = client.post(API + f"entries/{entry.entry_id}/restore/", {}, content_type="application/json")
    assert again.status_code == 409 and "not archived" in json.dumps(again.json())
    assert (
        client.post(API + "entries/manual_nope/restore/", {}, content_type="application/json").status_code
        == 404
    )
    bad = client.get(API + "entries/", {"archived": "maybe"})
    assert bad.status_code == 400 and "archived" in bad.json()["errors"]


def test_the_browser_shows_archived_entries_and_restores_one(client: Client, character):
    entry = archived_entry(character)
    page = client.get(PAGE).content.decode()
    assert 'data-testid="archived-entries"' in page and entry.text in page
    response = client.post(PAGE + f"entries/{entry.entry_id}/restore/", {"next": PAGE})
    assert response.status_code == 302
    entry.refresh_from_db()
    assert entry.archive_shard_path is None
    assert 'data-testid="no-archived-entries"' in client.get(PAGE).content.decode()


def test_a_dropped_correction_is_listed_by_rest_and_left_out_of_the_queue(
    client: Client, character, tmp_path
):
    correction = dropped_correction(character)
    assert client.get(API + "corrections/").json()["results"] == []
    dropped = client.get(API + "corrections/", {"status": "dropped"}).json()["results"]
    assert [(row["id"], row["status"], row["resolve_attempts"]) for row in dropped] == [
        (correction.pk, "dropped", 5)
    ]
    assert dropped[0]["dropped_at"] is not None
    assert [
        row["status"] for row in client.get(API + "corrections/", {"status": "all"}).json()["results"]
    ] == ["dropped"]
    assert client.get(API + "corrections/", {"status": "gone"}).status_code == 400
    # persona_corrections.json is the queue, as the original's file: a dropped pair is not in it.
    path = Path(tmp_path) / "persona_corrections.json"
    export_corrections(character, path)
    assert not path.exists() or json.loads(path.read_text(encoding="utf-8")) == []


def test_a_dropped_correction_shows_in_the_browser_and_is_resolved_by_hand(client: Client, character):
    correction = dropped_correction(character)
    make_entry(character=character, text="主人喜欢下雨")
    page = client.get(PAGE).content.decode()
    assert 'data-testid="dropped-corrections"' in page and 'data-testid="dropped"' in page
    assert 'data-testid="no-corrections"' in page  # the queue itself is empty
    response = client.post(
        PAGE + f"corrections/{correction.pk}/resolve/", {"action": "keep_new", "text": "", "next": PAGE}
    )
    assert response.status_code == 302
    assert not PersonaCorrection.objects.filter(pk=correction.pk).exists()
    assert PersonaEntry.objects.filter(character=character, text="主人讨厌下雨").exists()


def test_resolving_a_dropped_correction_through_the_service(character):
    correction = dropped_correction(character)
    entry = persona_correction_resolve(
        character_id=character.pk, correction_pk=correction.pk, action="keep_both"
    )
    assert entry is not None and entry.text == "主人讨厌下雨"
    assert not PersonaCorrection.objects.exists()
