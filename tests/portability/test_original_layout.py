"""A full original-layout directory (every file of reference §2, zh and en) through import_memory and
export_memory: nothing lost, nothing changed by a second import, a malformed file refused by name."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db.models import QuerySet

from facts.models import Fact
from nekomem.characters.models import Character
from nekomem.journal.events import VERSION_EVENT
from nekomem.journal.models import AppliedSentinel, Event, OutboxOp, WorkStatus
from persona.models import PersonaEntry
from recent.models import RawMessage
from reflections.models import Reflection, ReflectionCursor
from tests.portability.layout import (
    EXPORT_ONLY,
    FILES,
    FIXTURE,
    NAME,
    copy_fixture,
    database_snapshot,
    file_contents,
    load,
    ndjson,
)

pytestmark = pytest.mark.django_db


def run(command: str, *args: str) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


def test_the_fixture_holds_every_file_of_the_layout():
    present = {p.name for p in (FIXTURE / NAME).iterdir()}
    assert present == set(FILES)
    assert (FIXTURE / NAME / "reflection_archive").is_dir() and (FIXTURE / NAME / "persona_archive").is_dir()


def test_every_file_survives_import_then_export(tmp_path: Path):
    report = run("import_memory", str(FIXTURE))
    for name in FILES:
        assert f"{NAME}/{name}:" in report, name

    exported = run("export_memory", str(tmp_path), "--character", NAME)
    assert {line.split(":")[0] for line in exported.splitlines()} == {
        f"{NAME}/{name}" for name in (*FILES, *EXPORT_ONLY)
    }
    exported_cursors = load(tmp_path / NAME / "cursors.json")
    # The original leaves the key unused; the export says how far extraction has read (the newest
    # imported fact, as nothing else said so).
    newest_fact = max(f["created_at"] for f in load(FIXTURE / NAME / "facts.json"))
    assert exported_cursors.pop("extracted_until") == newest_fact
    assert exported_cursors == load(FIXTURE / NAME / "cursors.json")
    for name in FILES:
        if name != "cursors.json":
            assert file_contents(tmp_path / NAME, name) == file_contents(FIXTURE / NAME, name), name


def test_what_the_files_say_is_what_the_database_holds(tmp_path: Path):
    call_command("import_memory", str(FIXTURE))
    character = Character.objects.get(name=NAME)
    assert (character.language, character.master_name, character.master_nicknames) == (
        "zh",
        "阿凛",
        ["凛", "Rin"],
    )
    assert Fact.objects.filter(character=character, archived=True).count() == 2
    assert set(Reflection.objects.filter(character=character).values_list("status", flat=True)) == set(
        Reflection.Status.values
    )
    assert PersonaEntry.objects.filter(character=character, protected=True).count() == 2
    assert RawMessage.objects.filter(character=character).count() == 8
    cursor = ReflectionCursor.objects.get(character=character)
    assert cursor.rebuttal_checked_until is not None
    # The log and its sentinel: the last event applied, so nothing is replayed.
    events = ndjson(FIXTURE / NAME / "events.ndjson")
    assert [
        str(e)
        for e in Event.objects.filter(character=character)
        .exclude(type=VERSION_EVENT)
        .values_list("event_id", flat=True)
    ] == [e["event_id"] for e in events]
    sentinel = AppliedSentinel.objects.get(character=character)
    assert str(sentinel.last_applied_event_id) == events[-1]["event_id"]
    assert sentinel.last_applied_seq == Event.objects.filter(character=character).latest("seq").seq
    assert run("reconcile", "--character", NAME).startswith("applied 0 events")
    # The outbox: a done op, a dead-lettered one (five failed attempts), and one still to replay.
    statuses = dict(OutboxOp.objects.filter(character=character).values_list("type", "status").distinct())
    assert {op.status for op in OutboxOp.objects.filter(character=character)} == {
        WorkStatus.DONE,
        WorkStatus.DEAD,
        WorkStatus.PENDING,
    }, statuses
    assert OutboxOp.objects.get(status=WorkStatus.PENDING).attempts == 1


def test_importing_twice_changes_nothing(tmp_path: Path):
    call_command("import_memory", str(FIXTURE))
    before = database_snapshot()
    again = run("import_memory", str(FIXTURE), "--character", NAME)
    assert again.strip() == f"{NAME}: nothing changed"  # only files that were written are reported
    assert database_snapshot() == before


def test_a_changed_directory_reports_only_the_files_it_wrote(tmp_path: Path):
    root = copy_fixture(tmp_path / "in")
    call_command("import_memory", str(root))
    facts = load(root / NAME / "facts.json")
    facts[0]["importance"] = 10
    (root / NAME / "facts.json").write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")
    report = run("import_memory", str(root))
    assert report.splitlines() == [f"{NAME}/facts.json: 0 new, 1 updated, {len(facts) - 1} unchanged"]
    assert Fact.objects.get(fact_id=facts[0]["id"]).importance == 10


SHARD = "2025-04-01_3f2a9c1e.json"
PERSONA_SHARD = "2025-03-30_7d6e5f4a.json"
MALFORMED = [
    ("nekomem_character.json", '{"master_name": 5}', "nekomem_character.json, entry master_name"),
    ("recent.json", '[{"type": "robot", "data": {}}]', "recent.json, entry #0: message type"),
    ("recent_meta.json", '{"last_past_block_update_at": "soon"}', "recent_meta.json, entry last_past_block"),
    ("time_indexed.db", "this is not a database", "time_indexed.db: "),
    (
        "facts.json",
        '[{"id": "fact_x", "created_at": "2025-01-01T00:00:00"}]',
        "facts.json, entry #0 (fact_x)",
    ),
    ("facts_archive.json", '{"facts": []}', "facts_archive.json: expected a JSON list"),
    (
        "facts_pending_dedup.json",
        '[{"candidate_id": "a", "existing_id": "a"}]',
        "facts_pending_dedup.json, entry #0",
    ),
    (
        "reflections.json",
        '[{"text": "没有 id 的反思"}]',
        "reflections.json, entry #0: missing or non-string 'id'",
    ),
    (f"reflection_archive/{SHARD}", "[1]", f"reflection_archive/{SHARD}, entry #0"),
    (
        "surfaced.json",
        '[{"reflection_id": "ref_1", "text": "x", "surfaced_at": "2025-01-01", "feedback": "maybe"}]',
        "surfaced.json, entry #0: unknown feedback",
    ),
    ("cursors.json", '{"rebuttal_checked_until": "tomorrow"}', "cursors.json, entry rebuttal_checked_until"),
    ("persona.json", '{"master": {"facts": [{"id": 3}]}}', "persona.json, entry master #0"),
    (f"persona_archive/{PERSONA_SHARD}", '{"not": "a list"}', f"persona_archive/{PERSONA_SHARD}: expected"),
    ("persona_corrections.json", '[{"old_text": "a"}]', "persona_corrections.json, entry #0"),
    ("settings.json", '["not", "an", "object"]', "settings.json: expected a JSON object"),
    (
        "events.ndjson",
        '{"event_id": "e", "type": "fact.added", "ts": "2025-01-01T00:00:00"}\n',
        "events.ndjson, entry line 1",
    ),
    (
        "events_applied.json",
        '{"last_applied_event_id": 42}',
        "events_applied.json, entry last_applied_event_id",
    ),
    (
        "outbox.ndjson",
        '{"op_id": "6f0e2c1a-8b7d-4e3f-9a10-1b2c3d4e5f60", "status": "exploded", "ts": "2025-01-01"}\n',
        "outbox.ndjson, entry line 1: unknown status",
    ),
]


@pytest.mark.parametrize(("relative", "content", "expected"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_file_is_refused_by_name_and_nothing_is_written(tmp_path, relative, content, expected):
    root = copy_fixture(tmp_path / "in")
    (root / NAME / relative).write_bytes(content.encode())
    before = database_snapshot()
    with pytest.raises(CommandError) as refused:
        call_command("import_memory", str(root))
    assert f"{NAME}/{expected}" in str(refused.value)
    assert database_snapshot() == before
    assert not Character.objects.filter(name=NAME).exists()


def test_a_malformed_file_leaves_an_imported_character_as_it_was(tmp_path: Path):
    root = copy_fixture(tmp_path / "in")
    call_command("import_memory", str(root))
    before = database_snapshot()
    # Sound changes to several files, and one malformed file: none of it lands.
    facts = load(root / NAME / "facts.json")
    facts[0]["text"] = "阿凛考过了 N2"
    (root / NAME / "facts.json").write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")
    (root / NAME / "recent.json").write_text("[]", encoding="utf-8")
    (root / NAME / "outbox.ndjson").write_text("{not json\n", encoding="utf-8")
    with pytest.raises(CommandError, match=r"小天/outbox\.ndjson, entry line 1: invalid JSON"):
        call_command("import_memory", str(root))
    assert database_snapshot() == before


def test_every_malformed_file_is_named_at_once(tmp_path: Path):
    root = copy_fixture(tmp_path / "in")
    (root / NAME / "facts.json").write_text("{", encoding="utf-8")
    (root / NAME / "surfaced.json").write_text("{}", encoding="utf-8")
    with pytest.raises(CommandError) as refused:
        call_command("import_memory", str(root))
    assert "小天/facts.json: invalid JSON" in str(refused.value)
    assert "小天/surfaced.json: expected a JSON list" in str(refused.value)


def test_import_as_another_name(tmp_path: Path):
    report = run("import_memory", str(FIXTURE), "--character", NAME, "--as", "Mochi")
    assert "Mochi: new character" in report and "Mochi/facts.json" in report
    assert not Character.objects.filter(name=NAME).exists()
    call_command("export_memory", str(tmp_path / "out"), "--character", "Mochi")
    for name in FILES:
        assert file_contents(tmp_path / "out" / "Mochi", name) == file_contents(FIXTURE / NAME, name), name


def _log(character: Character) -> QuerySet[Event]:
    """The original's events of the character (the import's versions are the history's)."""
    return Event.objects.filter(character=character).exclude(type=VERSION_EVENT)


def test_the_same_directory_twice_under_two_names_keeps_both_whole(tmp_path: Path):
    call_command("import_memory", str(FIXTURE))
    call_command("import_memory", str(FIXTURE), "--character", NAME, "--as", "小天2号")
    original, copy = Character.objects.get(name=NAME), Character.objects.get(name="小天2号")
    # Event and op ids are unique across characters: the copy's are derived, the log intact.
    assert _log(copy).count() == _log(original).count() == 8
    assert OutboxOp.objects.filter(character=copy).count() == 3
    sentinel = AppliedSentinel.objects.get(character=copy)
    assert sentinel.last_applied_seq == Event.objects.filter(character=copy).latest("seq").seq
    before = database_snapshot()
    assert (
        run("import_memory", str(FIXTURE), "--character", NAME, "--as", "小天2号").strip()
        == "小天2号: nothing changed"
    )
    assert database_snapshot() == before
    call_command("export_memory", str(tmp_path / "out"), "--character", "小天2号")
    exported = ndjson(tmp_path / "out" / "小天2号" / "events.ndjson")
    assert [(e["type"], e["ts"], e["payload"]) for e in exported] == [
        (e["type"], e["ts"], e["payload"]) for e in ndjson(FIXTURE / NAME / "events.ndjson")
    ]
    assert (
        load(tmp_path / "out" / "小天2号" / "events_applied.json")["last_applied_event_id"]
        == exported[-1]["event_id"]
    )


def test_import_as_needs_a_directory_and_a_valid_name(tmp_path: Path):
    with pytest.raises(CommandError, match="--as needs --character"):
        call_command("import_memory", str(FIXTURE), "--as", "Mochi")
    with pytest.raises(CommandError, match="forbidden character"):
        call_command("import_memory", str(FIXTURE), "--character", NAME, "--as", "a/b")
    assert not Character.objects.exists()


@pytest.mark.parametrize(
    "command",
    [
        ("export_memory", "{root}", "--character", "无名氏"),
        ("import_memory", "{root}", "--character", "无名氏"),
        ("reconcile", "--character", "无名氏"),
    ],
    ids=["export_memory", "import_memory", "reconcile"],
)
def test_an_unknown_character_is_an_error(tmp_path: Path, command):
    args = [a.format(root=tmp_path) for a in command]
    with pytest.raises(CommandError, match="无名氏"):
        call_command(*args)
