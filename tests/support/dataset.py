"""Real conversations for tests, under tests/fixtures/conversations (origin and licence: its README).

The fixtures are MemoryBank turns (MIT) in the development data's ``turns.jsonl`` format; tests never read
the development data beside the repository, so a clone of the repository alone passes.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "conversations"
SETS = ("memorybank-cn", "memorybank-en")


@cache
def turns(dataset: str) -> tuple[dict, ...]:
    with (FIXTURES / dataset / "turns.jsonl").open(encoding="utf-8") as fh:
        return tuple(json.loads(line) for line in fh if line.strip())


def conversation(dataset: str, conv_id: str | None = None) -> list[dict]:
    rows = turns(dataset)
    conv_id = conv_id or rows[0]["conv_id"]
    return sorted((t for t in rows if t["conv_id"] == conv_id), key=lambda t: t["idx"])


def long_english_chat() -> list[dict]:
    """The five English MemoryBank users' chats one after another: 424 alternating turns, about 12.7k
    tokens, for tests that need a long English conversation (several compression budgets' worth)."""
    rows = turns("memorybank-en")
    return sorted(rows, key=lambda t: (t["conv_id"], t["idx"]))


def english_messages(n: int, start: int = 0) -> list[dict]:
    """``n`` consecutive messages of the long English chat from ``start``, as LangChain message dicts."""
    return as_messages(long_english_chat()[start : start + n])


def as_messages(rows: list[dict]) -> list[dict]:
    """LangChain message dicts for a run of dataset turns (user → human, assistant → ai)."""
    return [{"type": "human" if t["role"] == "user" else "ai", "data": {"content": t["text"]}} for t in rows]
