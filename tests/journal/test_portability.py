"""events.ndjson, events_applied.json and outbox.ndjson (nekomem/journal/portability.py): a re-import
never moves the sentinel back nor an op's state backwards; with history.ndjson (history/portability.py)
beside them, what the history knew of the events comes back."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import transaction

from nekomem.characters.models import Character
from nekomem.characters.services import character_delete, character_get_or_create
from nekomem.journal.events import VERSION_EVENT
from nekomem.journal.models import AppliedSentinel, Event, OutboxOp, WorkStatus
from nekomem.journal.services import event_append
from nekomem.portability import memory_export
from tests.portability.layout import NAME, copy_fixture, load, ndjson

pytestmark = pytest.mark.django_db
PENDING_OP = "d4c3b2a1-9999-4888-a777-666655554444"


def write_ndjson(path: Path, lines: list[dict]) -> None:
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = copy_fixture(tmp_path / "in")
    call_command("import_memory", str(root), verbosity=0)
    return root


def test_an_op_finished_here_stays_finished_when_an_older_file_comes_back(root: Path):
    OutboxOp.objects.filter(op_id=PENDING_OP).update(status=WorkStatus.DONE, attempts=1)
    call_command("import_memory", str(root), verbosity=0)
    assert OutboxOp.objects.get(op_id=PENDING_OP).status == WorkStatus.DONE


def test_an_op_the_file_finished_is_finished_here(root: Path):
    outbox = root / NAME / "outbox.ndjson"
    write_ndjson(
        outbox, [*ndjson(outbox), {"op_id": PENDING_OP, "status": "done", "ts": "2025-04-02T22:10:00"}]
    )
    call_command("import_memory", str(root), verbosity=0)
    op = OutboxOp.objects.get(op_id=PENDING_OP)
    assert op.status == WorkStatus.DONE and op.finished_at is not None and op.attempts == 1


def test_the_sentinel_never_moves_back(root: Path):
    character = Character.objects.get(name=NAME)
    with transaction.atomic():
        newer = event_append(character_id=character.pk, event_type="fact.added", payload={"fact_id": "f"})
    call_command("import_memory", str(root), verbosity=0)
    sentinel = AppliedSentinel.objects.get(character=character)
    assert sentinel.last_applied_seq == newer.seq and sentinel.last_applied_event_id == newer.event_id


def test_a_sentinel_on_an_event_no_longer_in_the_log_is_kept_without_a_position(tmp_path: Path):
    root = copy_fixture(tmp_path / "in")
    gone = str(uuid.uuid4())  # compacted away, as after the original's compaction
    (root / NAME / "events_applied.json").write_text(
        json.dumps({"last_applied_event_id": gone, "ts": "2025-04-02T21:00:00"}), encoding="utf-8"
    )
    call_command("import_memory", str(root), verbosity=0)
    sentinel = AppliedSentinel.objects.get()
    # No position: the reconciler replays the whole log, as the original does.
    assert sentinel.last_applied_seq is None and str(sentinel.last_applied_event_id) == gone
    call_command("export_memory", str(tmp_path / "out"), verbosity=0)
    assert load(tmp_path / "out" / NAME / "events_applied.json")["last_applied_event_id"] == gone
    # The import's versions (the memo it wrote) are the history's, not the original's events.
    assert Event.objects.exclude(type=VERSION_EVENT).count() == len(ndjson(root / NAME / "events.ndjson"))


def test_history_travels_in_a_file_of_its_own_and_comes_back(tmp_path: Path):
    """``history.ndjson`` (issue 49): what the history knows of each event beyond the original's line
    (here, which events compaction wrote as seeds); ``events.ndjson`` keeps the original's four keys."""
    name = "历史往返"
    character = character_get_or_create(name=name)
    with transaction.atomic():
        version = event_append(
            character_id=character.pk, event_type="fact.absorbed", payload={"fact_ids": []}
        )
        seed = event_append(
            character_id=character.pk, event_type="fact.absorbed", payload={"fact_ids": ["f"]}
        )
    Event.objects.filter(pk=seed.pk).update(seed=True)
    folder = tmp_path / "out" / name
    exported = {f.filename: f.entries for f in memory_export(character=character, folder=folder)}
    assert exported["history.ndjson"] == 2
    assert {tuple(sorted(line)) for line in ndjson(folder / "events.ndjson")} == {
        ("event_id", "payload", "ts", "type")
    }
    history = {line["event_id"]: line for line in ndjson(folder / "history.ndjson")}
    assert (history[str(version.event_id)]["seed"], history[str(seed.event_id)]["seed"]) == (False, True)

    character_delete(name=name)
    call_command("import_memory", str(tmp_path / "out"), verbosity=0)
    back = dict(Event.objects.filter(character__name=name).values_list("event_id", "seed"))
    assert back == {version.event_id: False, seed.event_id: True}
    # Again: nothing changes.
    call_command("import_memory", str(tmp_path / "out"), verbosity=0)
    assert dict(Event.objects.filter(character__name=name).values_list("event_id", "seed")) == back
