from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from facts.models import Fact
from nekomem.characters.models import Character
from recent.models import RawMessage, RecentMessage
from tests.portability.builders import build_character_dir, time_indexed_rows

pytestmark = pytest.mark.django_db
NAME = "小天"


def load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def snapshot() -> tuple:
    facts = [{k: v for k, v in f.items() if k != "updated_at"} for f in Fact.objects.order_by("pk").values()]
    raw = list(RawMessage.objects.order_by("pk").values_list("session_id", "message", "timestamp"))
    recent = list(RecentMessage.objects.order_by("position").values_list("position", "type", "data"))
    return facts, raw, recent


@pytest.fixture
def source(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    build_character_dir(root, NAME)
    return root


def test_round_trip_keeps_ids_texts_flags_and_times(source: Path, tmp_path: Path):
    call_command("import_memory", str(source))
    out = tmp_path / "out"
    call_command("export_memory", str(out), "--character", NAME)

    for name in ("facts.json", "facts_archive.json", "recent.json"):
        assert load(out / NAME / name) == load(source / NAME / name), name
    assert load(out / NAME / "recent_meta.json") == {
        "last_past_block_update_at": "2023-05-06T21:30:00.250000"
    }
    assert time_indexed_rows(out / NAME / "time_indexed.db") == time_indexed_rows(
        source / NAME / "time_indexed.db"
    )
    assert Fact.objects.filter(archived=True).count() == len(load(source / NAME / "facts_archive.json")) > 0


def test_import_is_idempotent(source: Path):
    call_command("import_memory", str(source))
    before = snapshot()
    version = Character.objects.get(name=NAME).memory_version
    call_command("import_memory", str(source), "--character", NAME)
    assert snapshot() == before
    # Nothing was written, so recall caches stay valid too.
    assert Character.objects.get(name=NAME).memory_version == version


def test_reimport_never_clears_one_way_flags_and_both_files_means_archived(source: Path):
    facts = load(source / NAME / "facts.json")
    target = facts[1]
    call_command("import_memory", str(source))
    Fact.objects.filter(fact_id=target["id"]).update(absorbed=True, signal_processed=True)
    # A crash between the original's two writes leaves a fact in both files.
    archive = load(source / NAME / "facts_archive.json")
    (source / NAME / "facts_archive.json").write_text(json.dumps([*archive, facts[2]], ensure_ascii=False))

    call_command("import_memory", str(source))

    kept = Fact.objects.get(fact_id=target["id"])
    assert kept.absorbed and kept.signal_processed
    assert Fact.objects.get(fact_id=facts[2]["id"]).archived
    assert Fact.objects.filter(fact_id=facts[2]["id"]).count() == 1


@pytest.mark.parametrize(
    ("filename", "content", "expected"),
    [
        (
            "facts.json",
            '[{"id": "fact_1", "text": "ok", "created_at": "2024-01-01T00:00:00"}, {"id": "fact_2"}]',
            "facts.json, entry #1 (fact_2): missing or non-string 'text'",
        ),
        (
            "facts.json",
            '[{"id": "fact_1", "text": "x", "created_at": "yesterday"}]',
            "facts.json, entry #0 (fact_1)",
        ),
        ("facts.json", '{"facts": []}', "facts.json: expected a JSON list"),
        ("facts.json", '[{"id": "a", "text": "b", ', "facts.json: invalid JSON at line 1"),
        (
            "facts_archive.json",
            '[{"id": "a", "text": "b", "created_at": "2024-01-01T00:00:00", "source": "x"}]',
            "facts_archive.json, entry #0 (a): unknown 'source'",
        ),
        ("recent.json", '[{"type": "robot", "data": {}}]', "recent.json, entry #0: message type"),
        (
            "recent_meta.json",
            '{"last_past_block_update_at": 5}',
            "recent_meta.json, entry last_past_block_update_at",
        ),
    ],
)
def test_malformed_file_is_refused_naming_file_and_entry(tmp_path, filename, content, expected):
    folder = tmp_path / "in" / NAME
    folder.mkdir(parents=True)
    (folder / filename).write_text(content, encoding="utf-8")
    with pytest.raises(CommandError) as refused:
        call_command("import_memory", str(tmp_path / "in"))
    assert expected in str(refused.value)
    assert Fact.objects.count() == 0 and RecentMessage.objects.count() == 0


def test_one_malformed_file_refuses_the_whole_directory(source: Path):
    (source / NAME / "recent.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(CommandError, match=r"recent\.json, entry #0"):
        call_command("import_memory", str(source))
    assert RecentMessage.objects.count() == 0 and Fact.objects.count() == 0
    assert not Character.objects.filter(name=NAME).exists()


def test_malformed_time_indexed_row_is_named(source: Path):
    import sqlite3

    db = sqlite3.connect(source / NAME / "time_indexed.db")
    db.execute("UPDATE time_indexed_original SET message = 'not json' WHERE id = 3")
    db.commit()
    db.close()
    with pytest.raises(CommandError, match=r"time_indexed.db, entry time_indexed_original id=3"):
        call_command("import_memory", str(source))
    assert RawMessage.objects.count() == 0


def test_naive_file_times_are_local_and_aware_in_the_database(source: Path, settings):
    settings.TIME_ZONE = "Asia/Shanghai"
    call_command("import_memory", str(source))
    first = load(source / NAME / "facts.json")[0]
    fact = Fact.objects.get(fact_id=first["id"])
    assert fact.created_at.utcoffset() is not None
    from django.utils import timezone

    assert timezone.localtime(fact.created_at).replace(tzinfo=None).isoformat() == first["created_at"]
