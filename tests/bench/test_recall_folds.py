"""The held-back recall bench: folds by conversation, a parameter chosen on the other folds, the
original-folder layout it imports, and the results file keeping each bench's section."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from django.core.management import call_command

from bench import original_folder, recall_misses
from bench.recall_folds import assign_folds, fold_gains, register_configs
from facts.models import Fact
from recent.models import RawMessage, RecentMessage

TURNS = [
    {"turn_id": "t1", "session": 1, "speaker": "Ann", "role": "user", "text": "I adopted a cat.",
     "timestamp": "2024-03-01T10:00:00", "idx": 0},
    {"turn_id": "t2", "session": 1, "speaker": "Neko", "role": "assistant", "text": "What is its name?",
     "timestamp": "2024-03-01T10:00:00", "idx": 1},
    {"turn_id": "t3", "session": 2, "speaker": "Ann", "role": "user", "text": "Mochi, she is grey.",
     "timestamp": "2024-03-02T09:00:00", "idx": 2},
]  # fmt: skip


def test_folds_split_by_conversation_and_fall_back_to_probes() -> None:
    convs = [f"c{i}" for i in range(5)]
    probes = [(c, f"p{j}") for c in convs for j in range(2)]
    folds, how = assign_folds(convs, probes, 3)
    assert how == "conversation"
    assert sorted(set(folds.values())) == [0, 1, 2]
    assert all(folds[(c, "p0")] == folds[(c, "p1")] for c in convs)  # a conversation stays in one fold
    assert assign_folds(convs, probes, 3) == (folds, how)  # deterministic
    _, how = assign_folds(["only"], [("only", f"p{j}") for j in range(9)], 3)
    assert how == "probe"


def test_a_tuned_value_is_chosen_on_the_other_folds() -> None:
    # Fold 0 prefers value "b", folds 1 and 2 prefer "a": held back, fold 0 gets "a".
    scores = {
        ("c0", "p"): {"nekomem": 0.0, "off": 0.0, "a": 0.0, "b": 1.0},
        ("c1", "p"): {"nekomem": 1.0, "off": 0.0, "a": 1.0, "b": 0.0},
        ("c2", "p"): {"nekomem": 1.0, "off": 0.0, "a": 1.0, "b": 0.0},
    }
    folds = {("c0", "p"): 0, ("c1", "p"): 1, ("c2", "p"): 2}
    shipped, tuned, chosen = fold_gains(scores, folds, 3, "nekomem", "off", {"a": "a", "b": "b"})
    assert shipped == [0.0, 1.0, 1.0]
    assert chosen == ["a", "a", "a"]
    assert tuned == [0.0, 1.0, 1.0]


def test_original_folder_has_the_three_files_as_the_original_writes_them(tmp_path: Path) -> None:
    id_map = original_folder.write_conversation(tmp_path / "ann", "ann", TURNS)
    facts = json.loads((tmp_path / "ann" / "facts.json").read_text(encoding="utf-8"))
    assert [f["entity"] for f in facts] == ["master"] * 3  # whom a fact is about, not who spoke
    assert {id_map[f["id"]] for f in facts} == {"t1", "t2", "t3"}
    with sqlite3.connect(tmp_path / "ann" / "time_indexed.db") as db:
        rows = db.execute("SELECT session_id, message FROM time_indexed_original ORDER BY id").fetchall()
    assert [json.loads(m)["type"] for _, m in rows] == ["human", "ai", "human"]
    assert rows[0][0] == rows[1][0] != rows[2][0]  # one session id a session
    recent = json.loads((tmp_path / "ann" / "recent.json").read_text(encoding="utf-8"))
    assert recent[-1]["data"]["content"] == "Mochi, she is grey."
    assert original_folder.turn_of({"id": "raw_9", "text": "What is its name?"}, id_map) == "t2"


@pytest.mark.django_db
def test_original_folder_goes_through_the_real_import(tmp_path: Path) -> None:
    original_folder.write_conversation(tmp_path / "import" / "ann", "ann", TURNS)
    call_command("import_memory", str(tmp_path / "import"))
    assert Fact.objects.filter(character__name="ann", entity="master").count() == 3
    assert RawMessage.objects.filter(character__name="ann").count() == 3
    assert RecentMessage.objects.filter(character__name="ann").count() == 3


def test_results_file_keeps_every_bench_section(tmp_path: Path) -> None:
    path = tmp_path / "recall-results.md"
    path.write_text("# Recall results\n\ntables\n", encoding="utf-8")
    recall_misses.write_section("folds-bench", "first", path=path)
    recall_misses.write_section("folds-original", "other", path=path)
    recall_misses.write_section("folds-bench", "second", path=path)
    text = path.read_text(encoding="utf-8")
    assert "second" in text and "first" not in text and "other" in text
    assert len(recall_misses.kept_sections(path)) == 2


def test_a_mechanism_off_by_default_is_measured_switched_on() -> None:
    from recall.engine.configs import CONFIGS, DEFAULT

    names, on, off, grid = register_configs()
    assert DEFAULT.feedback_docs == 0  # off by default (issue 50)...
    assert on["feedback"] != DEFAULT.name and CONFIGS[on["feedback"]].feedback_docs > 0  # ...measured on
    assert CONFIGS[off["feedback"]].feedback_docs == 0
    assert CONFIGS[grid[("feedback", 0.8)]].feedback_docs > 0  # its weight tuned with it on
    assert on["when"] == DEFAULT.name and CONFIGS[off["when"]].when_bonus == 0.0
    assert set(on.values()) | set(off.values()) <= set(names)
