"""Access to the shared development data (../shared/data): real conversations for fixtures."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

SHARED_DATA = Path(
    os.environ.get("NEKOMEM_SHARED_DATA", Path(__file__).resolve().parents[2].parent / "shared" / "data")
)
SETS = ("locomo10", "memorybank-cn", "memorybank-en", "madial_bench-ch", "madial_bench-en")


@cache
def turns(dataset: str) -> tuple[dict, ...]:
    with (SHARED_DATA / dataset / "turns.jsonl").open(encoding="utf-8") as fh:
        return tuple(json.loads(line) for line in fh if line.strip())


def conversation(dataset: str, conv_id: str | None = None) -> list[dict]:
    rows = turns(dataset)
    conv_id = conv_id or rows[0]["conv_id"]
    return sorted((t for t in rows if t["conv_id"] == conv_id), key=lambda t: t["idx"])


def as_messages(rows: list[dict]) -> list[dict]:
    """LangChain message dicts for a run of dataset turns (user → human, assistant → ai)."""
    return [{"type": "human" if t["role"] == "user" else "ai", "data": {"content": t["text"]}} for t in rows]
