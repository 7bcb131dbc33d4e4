"""How far extraction has read the raw log survives an import: from ``cursors.json``'s
``extracted_until`` when the directory says, else from the newest imported fact (the original extracts
as the turns come and keeps its cursors in memory). Turns before it leave recall's raw-turn pool."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from facts.models import ExtractionCursor
from facts.services import extraction_coverage_set
from nekomem.characters.models import Character
from nekomem.characters.services import character_get_or_create
from recall.selectors import raw_turn_candidates

pytestmark = pytest.mark.django_db
NAME = "Mochi"


def local(text: str) -> datetime:
    return timezone.make_aware(datetime.fromisoformat(text))


def fact(i: int, text: str, created: str) -> dict:
    return {
        "id": f"fact_{i}",
        "text": text,
        "importance": 5,
        "entity": "master",
        "source": "user_observation",
        "tags": [],
        "hash": f"{i:016x}",
        "created_at": created,
        "event_when_raw": None,
        "event_start_at": created,
        "event_end_at": None,
        "schema_version": 2,
        "absorbed": False,
        "signal_processed": True,
    }


TURNS = [
    ("2025-03-01T09:00:00", "我最喜欢的水果是芒果"),
    ("2025-03-01T11:00:00", "I adopted a grey cat called Pepper"),
    ("2025-03-01T13:00:00", "明天要去北京出差"),
]


def write_directory(root: Path, *, facts: list[dict] | None, cursors: dict | None = None) -> Path:
    folder = root / NAME
    folder.mkdir(parents=True)
    if facts is not None:
        (folder / "facts.json").write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")
    if cursors is not None:
        (folder / "cursors.json").write_text(json.dumps(cursors), encoding="utf-8")
    db = sqlite3.connect(folder / "time_indexed.db")
    db.execute(
        "CREATE TABLE time_indexed_original"
        " (id INTEGER PRIMARY KEY, session_id TEXT, message TEXT, timestamp DATETIME)"
    )
    for i, (when, text) in enumerate(TURNS):
        message = json.dumps({"type": "human", "data": {"content": text}}, ensure_ascii=False)
        db.execute(
            "INSERT INTO time_indexed_original (session_id, message, timestamp) VALUES (?, ?, ?)",
            (f"s{i}", message, when.replace("T", " ")),
        )
    db.commit()
    db.close()
    return root


def pool_texts() -> list[str]:
    character_id = Character.objects.get(name=NAME).pk
    return [c.text for c in raw_turn_candidates(character_id=character_id, space=None)]


def cursor_of(name: str) -> datetime | None:
    return ExtractionCursor.objects.get(character__name=name).last_a_message_at


FACTS = [
    fact(1, "主人最喜欢芒果", "2025-03-01T09:01:00"),
    fact(2, "The master has a grey cat called Pepper", "2025-03-01T11:02:00"),
]


def test_facts_without_a_cursor_cover_the_log_up_to_the_newest_fact(tmp_path: Path):
    call_command("import_memory", str(write_directory(tmp_path, facts=FACTS)))
    assert cursor_of(NAME) == local("2025-03-01T11:02:00")
    # The two turns the facts were made of are answered by the facts; the later one still by itself.
    assert pool_texts() == ["明天要去北京出差"]


def test_a_raw_log_without_facts_stays_in_the_pool(tmp_path: Path):
    call_command("import_memory", str(write_directory(tmp_path, facts=None)))
    assert not ExtractionCursor.objects.filter(character__name=NAME, last_a_message_at__isnull=False).exists()
    assert pool_texts() == [text for _, text in TURNS]


def test_extracted_until_in_cursors_json_wins_and_comes_back_in_the_export(tmp_path: Path):
    source = write_directory(tmp_path / "in", facts=FACTS, cursors={"extracted_until": "2025-03-01T10:00:00"})
    call_command("import_memory", str(source))
    assert cursor_of(NAME) == local("2025-03-01T10:00:00")
    assert pool_texts() == ["I adopted a grey cat called Pepper", "明天要去北京出差"]

    call_command("export_memory", str(tmp_path / "out"), "--character", NAME)
    exported = json.loads((tmp_path / "out" / NAME / "cursors.json").read_text())
    assert exported == {"extracted_until": "2025-03-01T10:00:00"}


def test_an_import_never_moves_a_cursor_extraction_has_moved(tmp_path: Path):
    character = character_get_or_create(name=NAME)
    extraction_coverage_set(character_id=character.pk, covered_until=local("2025-03-01T08:00:00"))
    call_command("import_memory", str(write_directory(tmp_path, facts=FACTS)))
    assert cursor_of(NAME) == local("2025-03-01T08:00:00")
    assert len(pool_texts()) == 3


def test_re_importing_the_same_cursors_changes_nothing(tmp_path: Path):
    source = write_directory(tmp_path, facts=FACTS, cursors={"extracted_until": "2025-03-01T10:00:00"})
    call_command("import_memory", str(source))
    second = StringIO()
    call_command("import_memory", str(source), stdout=second)
    assert cursor_of(NAME) == local("2025-03-01T10:00:00")
    assert second.getvalue().strip() == f"{NAME}: nothing changed"
