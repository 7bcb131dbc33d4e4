"""Helpers for recall tests: the real model (or a skip), facts in the original file shape, imports."""

from __future__ import annotations

import hashlib
import json
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.core.management import call_command

from nekomem.embeddings.fetch import profile_is_present
from nekomem.embeddings.profiles import DEFAULT_PROFILE, get_profile
from recall.engine import Candidate


def require_muse() -> None:
    """The default profile's models (MUSE, and MiniLM beside it in the fused default), or a skip."""
    # CI sets NEKOMEM_REQUIRE_MODELS after the fetch, so a missing model fails there instead of skipping.
    present = profile_is_present(Path(settings.EMBEDDING_MODEL_DIR), get_profile(DEFAULT_PROFILE))
    if not present and not os.environ.get("NEKOMEM_REQUIRE_MODELS"):
        pytest.skip(f"{DEFAULT_PROFILE} not fetched (python -m nekomem.embeddings.fetch)")


def fact_entry(text: str, when: datetime, *, key: str = "", archived_flag: bool = False) -> dict:
    digest = hashlib.sha256(f"{key}\0{text}".encode()).hexdigest()
    return {
        "id": f"fact_{when:%Y%m%d%H%M%S}_{digest[:8]}",
        "text": text,
        "importance": 5,
        "entity": "master",
        "source": "user_observation",
        "tags": [],
        "hash": digest[:16],
        "created_at": when.replace(tzinfo=None).isoformat(),
        "event_when_raw": None,
        "event_start_at": when.replace(tzinfo=None).isoformat(),
        "event_end_at": None,
        "schema_version": 2,
        "absorbed": archived_flag,
        "signal_processed": True,
    }


def import_facts(root: Path, name: str, facts: list[dict], archive: list[dict] | None = None) -> None:
    """Write ROOT/<name>/facts.json (+ facts_archive.json) and run the real import command."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "facts.json").write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")
    if archive is not None:
        (folder / "facts_archive.json").write_text(json.dumps(archive, ensure_ascii=False), encoding="utf-8")
    with open(os.devnull, "w") as sink:
        call_command("import_memory", str(root), "--character", name, stdout=sink)


T0 = datetime(2026, 5, 1, 12, tzinfo=UTC)


TURN_SPEAKERS = {"master": "human", "neko": "ai"}


def turn(
    i: int,
    text: str,
    *,
    entity: str,
    minutes: float,
    pool: str = "facts",
    vector: list[float] | None = None,
    speaker: str | None = "",
) -> Candidate:
    """A turn of a conversation, said by the master ("human") or the character ("ai") as ``entity``
    says, unless ``speaker`` names another (None: a row that is not a turn of a known speaker)."""
    when = T0 + timedelta(minutes=minutes)
    return Candidate(
        speaker=TURN_SPEAKERS.get(entity) if speaker == "" else speaker,
        id=f"t{i}",
        text=text,
        tier="fact",
        entity=entity,
        created_at=when,
        event_start_at=when,
        pool=pool,
        key=i,
        vector=None if vector is None else np.asarray(vector, dtype=np.float32),
    )
