"""``speaker_trust.json`` (reference §2.15): the ledger exported at the root of the memory folder and
imported back, unchanged by a second import, refused whole when malformed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from groupchat.identity.models import Account, ActivityEvent, Entity, TrustBarrier
from groupchat.identity.selectors import trust_profile
from groupchat.identity.services import (
    account_bind,
    account_ensure,
    legacy_barrier_waive,
    legacy_profiles_import,
    speaker_trust_apply,
)
from groupchat.identity.trust import trust_input_parse
from nekomem.portability import memory_export_root, memory_import_root
from tests.characters.factories import CharacterFactory

pytestmark = pytest.mark.django_db


def ledger() -> None:
    legacy_profiles_import(
        platform="qq",
        source="legacy.v1",
        profiles={"1001": {"adjustment": -0.08, "message_count": 3}},
        final=True,
    )
    legacy_barrier_waive(platform="discord")
    raw = {
        "speaker_id": "qq:1001",
        "speaker_tier": "trusted",
        "speaker_channel": "napcat",
        "speaker_activity_events": [{"id": "activity_0000000001", "count": 2}],
    }
    outcome = speaker_trust_apply(inputs=[trust_input_parse(raw)])[0]
    assert outcome.persisted is True
    account_ensure(account_id="discord:55")
    account_bind(
        account_id="discord:55", entity_id=Account.objects.get(account_id="qq:1001").entity.entity_id
    )


def profiles() -> list[dict]:
    return [
        {k: v for k, v in trust_profile(account_id=a).items() if k != "updated_at"}
        for a in ("qq:1001", "discord:55")
    ]


def test_the_ledger_round_trips_through_the_memory_folder(tmp_path: Path) -> None:
    CharacterFactory(name="Mio")
    ledger()
    before = profiles()
    call_command("export_memory", str(tmp_path), verbosity=0)
    data = json.loads((tmp_path / "speaker_trust.json").read_text())
    entity_id = before[0]["entity_id"]
    assert data["account_index"] == {"qq:1001": entity_id, "discord:55": entity_id}
    record = data["entities"][entity_id]["accounts"]["qq:1001"]
    assert record["tier"] == "trusted" and record["message_count"] == 5 and record["channels"] == ["napcat"]
    assert {"id": "activity_0000000001", "count": 2} in record["processed_activity_events"]
    assert data["legacy_barriers"]["qq"]["status"] == "cleared"
    assert not (tmp_path / "Mio" / "speaker_trust.json").exists()  # not a character's file

    ActivityEvent.objects.all().delete()
    Account.objects.all().delete()
    Entity.objects.all().delete()
    TrustBarrier.objects.all().delete()
    call_command("import_memory", str(tmp_path), verbosity=0)
    assert profiles() == before
    assert set(TrustBarrier.objects.values_list("platform", "status")) == {
        ("qq", "cleared"),
        ("discord", "waived"),
    }
    # A retry counts the already imported events as known.
    again = speaker_trust_apply(
        inputs=[
            trust_input_parse(
                {
                    "speaker_id": "qq:1001",
                    "speaker_tier": "trusted",
                    "speaker_activity_events": [{"id": "activity_0000000001", "count": 2}],
                }
            )
        ]
    )[0]
    assert again.activity_applied == 0

    second = memory_import_root(root=tmp_path)[0].result
    assert (second.created, second.updated, second.unchanged) == (0, 0, 2)


def test_importing_the_same_file_twice_changes_nothing(tmp_path: Path) -> None:
    ledger()
    memory_export_root(root=tmp_path)
    first = memory_import_root(root=tmp_path)[0].result
    assert first.created == 0 and first.updated == 0 and first.unchanged == 2
    assert memory_import_root(root=tmp_path)[0].result.unchanged == 2


def test_a_malformed_ledger_file_is_refused_whole(tmp_path: Path) -> None:
    bad = {
        "version": 1,
        "entities": {
            "ent_a": {"accounts": {"qq:1": {"tier": "normal"}}},
            "ent_b": {"accounts": {"not an id": {}}},
        },
    }
    (tmp_path / "speaker_trust.json").write_text(json.dumps(bad))
    with pytest.raises(CommandError, match=r"speaker_trust\.json, entry not an id"):
        call_command("import_memory", str(tmp_path), verbosity=0)
    assert not Account.objects.exists()


def test_an_empty_ledger_writes_no_file(tmp_path: Path) -> None:
    assert memory_export_root(root=tmp_path) == []
    assert not (tmp_path / "speaker_trust.json").exists()
