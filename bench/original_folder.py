"""A development conversation laid out as an original N.E.K.O. memory folder carries it (issue 50).

``ROOT/<conv_id>/`` holds what the original leaves behind (reference §2): ``facts.json`` as its extraction
writes it (one fact a turn, ``entity`` saying whom the fact is about: ``master``; no import tags),
``time_indexed.db`` (the raw log: every turn, one ``session_id`` uuid per session, the session's time on
each of its rows) and ``recent.json`` (the last turns as LangChain messages). Nothing in it says which
fact answers which: that is what a real import gives recall to work with.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import uuid
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from bench import recall_eval, shared_data

RECENT_TURNS = 10


def original_fact(*, fact_id: str, text: str, digest: str, when: datetime) -> dict[str, object]:
    """One fact as the original's ``facts.json`` writes it: about the master, a user observation."""
    return {
        "id": fact_id,
        "text": text,
        "importance": 5,
        "entity": "master",
        "source": "user_observation",
        "tags": [],
        "hash": digest[:16],
        "created_at": when.isoformat(),
        "event_when_raw": None,
        "event_start_at": when.isoformat(),
        "event_end_at": None,
        "schema_version": 2,
        "absorbed": False,
        "signal_processed": True,
    }


def conversations(set_name: str) -> dict[str, list[dict]]:
    convs: dict[str, list[dict]] = defaultdict(list)
    for turn in shared_data.turns(set_name):
        convs[turn["conv_id"]].append(turn)
    return {c: sorted(rows, key=lambda t: t["idx"]) for c, rows in convs.items()}


def message(turn: dict) -> dict:
    kind = "human" if turn["role"] == "user" else "ai"
    return {"type": kind, "data": {"content": turn["text"], "type": kind}}


def write_conversation(folder: Path, conv_id: str, rows: list[dict]) -> dict[str, str]:
    """The three files of one conversation; returns {fact id or 'text:'+text: turn id} to score answers."""
    folder.mkdir(parents=True, exist_ok=True)
    id_map: dict[str, str] = {}
    facts = []
    for turn in rows:
        text = recall_eval.fact_text(turn)
        when = datetime.fromisoformat(turn["timestamp"])
        digest = hashlib.sha256(text.encode()).hexdigest()
        salt = hashlib.sha256(f"{conv_id}\0{turn['turn_id']}".encode()).hexdigest()
        fact_id = f"fact_{when:%Y%m%d%H%M%S}_{salt[:8]}"
        id_map[fact_id] = turn["turn_id"]
        id_map["text:" + text] = turn["turn_id"]
        id_map["text:" + turn["text"]] = turn["turn_id"]
        facts.append(original_fact(fact_id=fact_id, text=text, digest=digest, when=when))
    (folder / "facts.json").write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")
    db = sqlite3.connect(folder / "time_indexed.db")
    db.execute(
        "CREATE TABLE time_indexed_original"
        " (id INTEGER PRIMARY KEY, session_id TEXT, message TEXT, timestamp DATETIME)"
    )
    sessions: dict[str, str] = {}
    for turn in rows:
        key = str(turn.get("session", turn["turn_id"]))
        session_id = sessions.setdefault(
            key, str(uuid.UUID(hashlib.md5(f"{conv_id}{key}".encode()).hexdigest()))
        )
        db.execute(
            "INSERT INTO time_indexed_original (session_id, message, timestamp) VALUES (?, ?, ?)",
            (session_id, json.dumps(message(turn), ensure_ascii=False), turn["timestamp"].replace("T", " ")),
        )
    db.commit()
    db.close()
    recent = [message(turn) for turn in rows[-RECENT_TURNS:]]
    (folder / "recent.json").write_text(json.dumps(recent, ensure_ascii=False), encoding="utf-8")
    return id_map


def write_original_dir(root: Path, set_name: str) -> tuple[dict[str, dict[str, str]], dict[str, list[dict]]]:
    """ROOT/<conv_id>/ per conversation; returns {character: id map} and {character: probes with evidence}."""
    convs = conversations(set_name)
    id_maps = {conv_id: write_conversation(root / conv_id, conv_id, rows) for conv_id, rows in convs.items()}
    probes: dict[str, list[dict]] = defaultdict(list)
    for probe in shared_data.probes(set_name):
        if probe["evidence_turn_ids"] and probe["conv_id"] in convs:
            probes[probe["conv_id"]].append(probe)
    return id_maps, probes


def turn_of(result: dict, id_map: dict[str, str]) -> str | None:
    """The turn a /query_memory result is: by fact id, else by its text (raw-log rows, reflections)."""
    return id_map.get(result.get("id", "")) or id_map.get("text:" + str(result.get("text", "")))
