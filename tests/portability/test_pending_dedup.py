"""``facts_pending_dedup.json`` (reference §2.6) through import_memory / export_memory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from facts.models import Fact, FactDedupPair
from facts.services import dedup_pairs_arbitrate
from nekomem.characters.models import Character
from tests.portability.builders import build_character_dir, write_pending_pairs
from tests.support.llm_server import json_content

pytestmark = pytest.mark.django_db
NAME = "小天"
FILE = "facts_pending_dedup.json"


def load(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture
def source(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    write_pending_pairs(build_character_dir(root, NAME))
    return root


def pairs_snapshot() -> list[dict[str, Any]]:
    return [dict(row) for row in FactDedupPair.objects.order_by("pk").values()]


def test_round_trip_in_the_original_shape(source: Path, tmp_path: Path):
    call_command("import_memory", str(source))
    call_command("export_memory", str(tmp_path / "out"), "--character", NAME)

    exported = load(tmp_path / "out" / NAME / FILE)
    assert exported == load(source / NAME / FILE)
    assert list(exported[0]) == [
        "candidate_id",
        "existing_id",
        "candidate_text",
        "existing_text",
        "entity",
        "subject_key",
        "scope",
        "cosine",
        "queued_at",
    ]
    linked = FactDedupPair.objects.exclude(existing=None).order_by("queued_at", "pk").first()
    assert linked is not None and linked.candidate == Fact.objects.get(fact_id=exported[0]["candidate_id"])
    # The pair whose existing fact is gone keeps its ids for the file; its link is empty.
    orphan = FactDedupPair.objects.get(existing_fact_id="fact_20230101000000_deadbeef")
    assert orphan.existing is None and orphan.candidate is not None


def test_import_is_idempotent_and_keeps_decided_pairs_decided(source: Path):
    call_command("import_memory", str(source))
    before = pairs_snapshot()
    call_command("import_memory", str(source))
    assert pairs_snapshot() == before

    FactDedupPair.objects.filter(pk=before[0]["id"]).update(status="done", decision="keep_both")
    # The same pair listed the other way round is the same pair, and is not re-queued either.
    pairs = load(source / NAME / FILE)
    first = pairs[0]
    pairs.append(
        {
            **first,
            "candidate_id": first["existing_id"],
            "existing_id": first["candidate_id"],
            "candidate_text": first["existing_text"],
            "existing_text": first["candidate_text"],
        }
    )
    (source / NAME / FILE).write_text(json.dumps(pairs, ensure_ascii=False), encoding="utf-8")
    call_command("import_memory", str(source))
    assert FactDedupPair.objects.count() == len(before)
    assert FactDedupPair.objects.get(pk=before[0]["id"]).status == "done"


def test_export_lists_pending_pairs_only(source: Path, tmp_path: Path, llm_server):
    call_command("import_memory", str(source))
    llm_server.script(json_content([{"index": 0, "action": "keep_both"}]))
    dedup_pairs_arbitrate(character_id=Character.objects.get(name=NAME).pk)

    call_command("export_memory", str(tmp_path / "out"), "--character", NAME)

    exported = load(tmp_path / "out" / NAME / FILE)
    source_pairs = load(source / NAME / FILE)
    # Arbitration closed the orphan (fact gone) and decided the oldest pair; the rest stay queued.
    assert exported == [p for p in source_pairs[1:] if p["existing_id"] != "fact_20230101000000_deadbeef"]


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"existing_id": "fact_2"}, "entry #1: missing or non-string 'candidate_id'"),
        (
            {"candidate_id": "fact_1", "existing_id": 7},
            "entry #1 (fact_1~7): missing or non-string 'existing_id'",
        ),
        ({"candidate_text": None}, "entry #1 (fact_a~fact_b): missing or non-string 'candidate_text'"),
        ({"cosine": "0.9"}, "entry #1 (fact_a~fact_b): 'cosine' must be a number or null"),
        ({"queued_at": "soon"}, "entry #1 (fact_a~fact_b)"),
        ({"scope": 3}, "'scope' must be a string or null"),
        ({"existing_id": "fact_a"}, "are the same fact"),
    ],
)
def test_malformed_entries_are_refused_naming_file_and_entry(tmp_path: Path, entry, expected):
    good = {
        "candidate_id": "fact_a",
        "existing_id": "fact_b",
        "candidate_text": "阿凛很喜欢猫",
        "existing_text": "阿凛喜欢猫",
        "entity": "master",
        "subject_key": None,
        "scope": None,
        "cosine": None,
        "queued_at": "2024-01-01T00:00:00",
    }
    bad = {**good, **entry}
    if "existing_id" in entry and "candidate_id" not in entry and entry["existing_id"] == "fact_2":
        del bad["candidate_id"]
    folder = tmp_path / "in" / NAME
    folder.mkdir(parents=True)
    (folder / FILE).write_text(json.dumps([good, bad], ensure_ascii=False), encoding="utf-8")
    with pytest.raises(CommandError) as refused:
        call_command("import_memory", str(tmp_path / "in"))
    assert f"{FILE}, entry" in str(refused.value) and expected in str(refused.value)
    assert FactDedupPair.objects.count() == 0


def test_not_a_list_is_refused(tmp_path: Path):
    folder = tmp_path / "in" / NAME
    folder.mkdir(parents=True)
    (folder / FILE).write_text('{"pairs": []}', encoding="utf-8")
    with pytest.raises(CommandError, match=rf"{FILE}: expected a JSON list of pairs"):
        call_command("import_memory", str(tmp_path / "in"))
