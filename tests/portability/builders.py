"""Build an original-layout memory directory from a fixture conversation (tests/fixtures)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tests.support.dataset import conversation


def _fact(turn: dict[str, Any], i: int) -> dict[str, Any]:
    text = turn["text"]
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    created = datetime.fromisoformat(turn["timestamp"]) + timedelta(seconds=i, microseconds=1000 * i)
    record: dict[str, Any] = {
        "id": f"fact_{created:%Y%m%d%H%M%S}_{digest[:8]}",
        "text": text,
        "importance": 1 + i % 10,
        "entity": ("master", "neko", "relationship")[i % 3],
        "source": "user_observation" if i % 4 else "ai_disclosure",
        "tags": ["external_import", "memorybank"] if i % 5 == 0 else [],
        "hash": digest,
        "created_at": created.isoformat(),
        "event_when_raw": {"start": {"offset": -i, "unit": "day"}, "end": None} if i % 2 else None,
        "event_start_at": (created - timedelta(days=i if i % 2 else 0)).isoformat(),
        "event_end_at": None,
        "schema_version": 2 if i % 7 else 1,
        "absorbed": i % 3 == 0,
        "signal_processed": i % 2 == 0,
    }
    if i % 6 == 0:
        record["speaker_label"] = "master"
        record["recheck_attempts"] = 1
    if i % 9 == 0:
        record["embedding"] = "AAAAAA=="
        record["embedding_text_sha256"] = "ab" * 32
        record["embedding_model_id"] = "bge-small-zh@1"
    return record


def message(turn: dict[str, Any]) -> dict[str, Any]:
    kind = "human" if turn["role"] == "user" else "ai"
    return {
        "type": kind,
        "data": {"content": turn["text"], "additional_kwargs": {}, "type": kind, "id": None},
    }


def build_character_dir(root: Path, name: str, dataset: str = "memorybank-cn") -> Path:
    turns = conversation(dataset)
    folder = root / name
    folder.mkdir(parents=True)
    facts = [_fact(t, i) for i, t in enumerate(t for t in turns if t["role"] == "user")]
    archived = [f for f in facts if f["absorbed"] and int(f["id"][-1], 16) % 2 == 0]
    active = [f for f in facts if f not in archived]
    (folder / "facts.json").write_text(json.dumps(active, ensure_ascii=False, indent=2), encoding="utf-8")
    (folder / "facts_archive.json").write_text(
        json.dumps(archived, ensure_ascii=False, indent=2), encoding="utf-8"
    )
    memo = {
        "type": "system",
        "data": {"content": "先前对话的备忘录: 阿凛说过很多事", "type": "system", "id": None},
    }
    recent = [memo, *(message(t) for t in turns[-9:])]
    (folder / "recent.json").write_text(json.dumps(recent, ensure_ascii=False), encoding="utf-8")
    (folder / "recent_meta.json").write_text(json.dumps({"last_summary_at": "2023-05-06T21:30:00.250000"}))
    db = sqlite3.connect(folder / "time_indexed.db")
    db.execute(
        "CREATE TABLE time_indexed_original"
        " (id INTEGER PRIMARY KEY, session_id TEXT, message TEXT, timestamp DATETIME)"
    )
    for t in turns:
        db.execute(
            "INSERT INTO time_indexed_original (session_id, message, timestamp) VALUES (?, ?, ?)",
            (
                f"session-{t['session']}",
                json.dumps(message(t), ensure_ascii=False),
                t["timestamp"].replace("T", " "),
            ),
        )
    db.commit()
    db.close()
    return folder


def time_indexed_rows(path: Path) -> list[tuple[str, str, datetime]]:
    db = sqlite3.connect(path)
    try:
        rows = db.execute(
            "SELECT session_id, message, timestamp FROM time_indexed_original ORDER BY timestamp, id"
        )
        return [(s, m, datetime.fromisoformat(ts)) for s, m, ts in rows]
    finally:
        db.close()


def write_pending_pairs(folder: Path) -> list[dict[str, Any]]:
    """``facts_pending_dedup.json`` (reference §2.6) over the folder's facts: a text pair (cosine null),
    vector pairs, a scoped one, and one whose existing fact is no longer in either file."""
    facts = [
        *json.loads((folder / "facts.json").read_text(encoding="utf-8")),
        *json.loads((folder / "facts_archive.json").read_text(encoding="utf-8")),
    ]
    pairs: list[dict[str, Any]] = []
    for i in range(4):
        candidate, existing = facts[2 * i + 1], facts[2 * i]
        pairs.append(
            {
                "candidate_id": candidate["id"],
                "existing_id": existing["id"],
                "candidate_text": candidate["text"],
                "existing_text": existing["text"],
                "entity": candidate["entity"],
                "subject_key": "group:42" if i == 2 else None,
                "scope": "group" if i == 2 else None,
                "cosine": None if i == 0 else 0.86 + i / 100,
                "queued_at": f"2023-05-0{i + 1}T10:00:00" + (f".{i}00000" if i else ""),
            }
        )
    pairs.append({**pairs[1], "existing_id": "fact_20230101000000_deadbeef", "existing_text": "已删除的事实"})
    (folder / "facts_pending_dedup.json").write_text(
        json.dumps(pairs, ensure_ascii=False, indent=2), encoding="utf-8"
    )
    return pairs
