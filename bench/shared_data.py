"""The development data the benchmarks read: ../shared/data beside the repository, or NEKOMEM_SHARED_DATA.

It is not part of the repository (LoCoMo has no licence that lets us ship it). Each set is a folder with
``turns.jsonl``, ``probes.jsonl`` and ``SOURCE.md``, converted from the public upstream sets below; the unit
tests do not need it (they use the small MIT-licensed fixtures under tests/fixtures/).
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path

SHARED_DATA = Path(
    os.environ.get("NEKOMEM_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
SETS = ("locomo10", "memorybank-cn", "memorybank-en", "madial_bench-ch", "madial_bench-en")
UPSTREAM = {
    "locomo10": "https://github.com/snap-research/locomo (data/locomo10)",
    "memorybank-cn": "https://github.com/zhongwanjun/MemoryBank-SiliconFriend (eval_data/cn)",
    "memorybank-en": "https://github.com/zhongwanjun/MemoryBank-SiliconFriend (eval_data/en)",
    "madial_bench-ch": "https://github.com/hejunqing/MADial-Bench (data/ch)",
    "madial_bench-en": "https://github.com/hejunqing/MADial-Bench (data/en)",
}


def set_path(name: str, file: str) -> Path:
    """``SHARED_DATA/name/file``; exits with where to get the data when it is missing."""
    path = SHARED_DATA / name / file
    if not path.is_file():
        raise SystemExit(
            f"benchmark data missing: {path}\n"
            "The benchmarks read the development data from ../shared/data beside the repository.\n"
            "Put the shared data folder there, or set NEKOMEM_SHARED_DATA=/path/to/shared/data.\n"
            f"'{name}' is converted from {UPSTREAM.get(name, 'its upstream set')};"
            " the format is described in the data folder's README.md."
        )
    return path


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@cache
def turns(name: str) -> tuple[dict, ...]:
    return tuple(read_jsonl(set_path(name, "turns.jsonl")))


def probes(name: str) -> list[dict]:
    return read_jsonl(set_path(name, "probes.jsonl"))


def conversation(name: str, conv_id: str | None = None) -> list[dict]:
    rows = turns(name)
    conv_id = conv_id or rows[0]["conv_id"]
    return sorted((t for t in rows if t["conv_id"] == conv_id), key=lambda t: t["idx"])
