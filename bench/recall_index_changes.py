"""What a memory change costs the recall index, in process: a full build vs applying the changed rows.

    .venv/bin/python bench/recall_index_changes.py [--facts 100000]

Facts are the realistic texts of ``bench/recall_realistic.py`` (openings of the development sets' turns,
~30 words) with random unit vectors of the model's width (512). Timed: one full build (what every change
cost before the change log), then one new fact, one edit, one delete, one backfill batch of 256 vectors,
and a query after each; then saving and loading the index (a restarted worker's start).
"""

from __future__ import annotations

import argparse
import io
import pickle
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.recall_realistic import fact_texts  # noqa: E402
from tests.support.dataset import SETS, turns  # noqa: E402

DIM = 512
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=100_000)
    args = parser.parse_args()
    import os

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nekomem.settings")
    import django

    django.setup()
    from recall.engine import DEFAULT, Candidate, RecallIndex

    pool = [t["text"] for s in SETS for t in turns(s) if t["text"].strip()]
    texts = fact_texts(args.facts + 10, pool)
    rng = np.random.default_rng(1)

    def unit() -> np.ndarray:
        v = rng.normal(size=DIM).astype(np.float32)
        return (v / np.linalg.norm(v)).astype(np.float16)

    def fact(key: int, text: str, vector: bool = True) -> Candidate:
        when = T0 + timedelta(minutes=key)
        vec = unit() if vector else None
        return Candidate(
            id=f"f{key}", text=text, tier="fact", created_at=when, vector=vec, pool="fact", key=key
        )

    rows = [fact(k, texts[k], vector=k >= 256) for k in range(args.facts)]
    query_vector = unit().astype(np.float32)
    timings: list[tuple[str, float]] = []

    started = time.perf_counter()
    index = RecallIndex(rows, dim=DIM)
    timings.append(("full build (every change, before)", time.perf_counter() - started))

    def timed(label: str, action) -> None:
        started = time.perf_counter()
        action()
        index.search("喜欢 咖啡 weekend", config=DEFAULT, query_vector=query_vector)
        timings.append((label, time.perf_counter() - started))

    timed("query, nothing changed", lambda: None)
    timed(
        "one new fact + query",
        lambda: index.apply(pool="fact", upserts=[fact(args.facts, texts[args.facts])]),
    )
    timed("one edit + query", lambda: index.apply(pool="fact", upserts=[fact(7, texts[args.facts + 1])]))
    timed("one delete + query", lambda: index.apply(pool="fact", removed=[9]))
    timed(
        "256 backfilled vectors + query",
        lambda: index.apply(pool="fact", vectors={k: unit() for k in range(256)}),
    )

    started = time.perf_counter()
    buffer = io.BytesIO()
    pickle.dump(index, buffer, protocol=pickle.HIGHEST_PROTOCOL)
    timings.append((f"save ({buffer.tell() / 1e6:.0f} MB)", time.perf_counter() - started))
    started = time.perf_counter()
    buffer.seek(0)
    loaded = pickle.load(buffer)
    loaded.search("喜欢 咖啡 weekend", config=DEFAULT, query_vector=query_vector)
    timings.append(("load + first query (restart)", time.perf_counter() - started))

    print(f"\nRecall index, {args.facts} facts, in process (load average {os.getloadavg()[0]:.1f})\n")
    print(f"{'what':<40} {'ms':>10}")
    print("-" * 51)
    for label, seconds in timings:
        print(f"{label:<40} {seconds * 1000:>10.1f}")


if __name__ == "__main__":
    main()
