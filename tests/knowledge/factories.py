"""Knowledge packs as the original writes them, and their rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import factory
from factory.django import DjangoModelFactory

from knowledge.models import IndexBatch, QueryRecord

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_pack() -> dict[str, Any]:
    """The fixture pack: a Chinese entry with alias and recognition terms, an English one, tags."""
    return json.loads((FIXTURES / "pack-memes.json").read_text(encoding="utf-8"))


def pack_dict(
    *, pack_id: str = "notes.test", entries: int = 2, material_type: str = "knowledge", **extra: Any
) -> dict[str, Any]:
    pack: dict[str, Any] = {
        "schema_version": 1,
        "pack_id": pack_id,
        "material_type": material_type,
        "source": {"name": f"Source of {pack_id}", "homepage": "", "license": "MIT"},
        "entries": [
            {
                "title": f"Entry {index}",
                "content": f"Content of entry {index} of {pack_id}.",
                "tags": ["domain:test"],
            }
            for index in range(entries)
        ],
    }
    pack.update(extra)
    return pack


def pack_bytes(pack: dict[str, Any]) -> bytes:
    return json.dumps(pack, ensure_ascii=False).encode("utf-8")


class QueryRecordFactory(DjangoModelFactory[QueryRecord]):
    class Meta:
        model = QueryRecord

    mode = "lookup"
    result = "miss"
    elapsed_ms = factory.Sequence(lambda n: n)


class IndexBatchFactory(DjangoModelFactory[IndexBatch]):
    class Meta:
        model = IndexBatch

    model_id = "test-model"
    selected = 8
    stored = 8
