"""What the reply context and the feedback terms (``RecallConfig.context_weight``, ``feedback_docs``)
cost a query, in process, at 100k facts.

    .venv/bin/python bench/recall_ranking_cost.py [--facts 100000] [--queries 200]

Facts are the realistic texts of ``bench/recall_realistic.py`` with random unit vectors of the model's
width, said in turn by the user and the character a minute apart (every row has a neighbour: the most
work the context can cost). The development sets' probe questions are asked under the default
configuration and under the same without each, in turn, so all see the same machine load; the
HTTP stack and the query's embedding are left out (they do not change with the context).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench import shared_data  # noqa: E402
from bench.recall_realistic import fact_texts  # noqa: E402
from tests.support.dataset import SETS, turns  # noqa: E402

DIM = 512
T0 = datetime(2025, 1, 1, tzinfo=UTC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nekomem.settings")
    import django

    django.setup()
    from recall.engine import DEFAULT, Candidate, RecallIndex

    pool = [t["text"] for s in SETS for t in turns(s) if t["text"].strip()]
    texts = fact_texts(args.facts, pool)
    rng = np.random.default_rng(1)

    def unit() -> np.ndarray:
        v = rng.normal(size=DIM).astype(np.float32)
        return v / np.linalg.norm(v)

    rows = (
        Candidate(
            id=f"f{k}",
            text=texts[k],
            tier="fact",
            entity="master" if k % 2 else "neko",
            created_at=T0 + timedelta(minutes=k),
            vector=unit().astype(np.float16),
            pool="fact",
            key=k,
        )
        for k in range(args.facts)
    )
    index = RecallIndex(rows, dim=DIM)
    questions = [p["question"] for s in shared_data.SETS for p in shared_data.probes(s)]
    questions = questions[:: max(1, len(questions) // args.queries)][: args.queries]
    vectors = [unit() for _ in questions]
    configs = {
        "default": DEFAULT,
        "without feedback terms": replace(DEFAULT, feedback_docs=0),
        "without both (before #36)": replace(DEFAULT, context_weight=0.0, feedback_docs=0),
    }
    timings: dict[str, list[float]] = {label: [] for label in configs}
    for question, vector in zip(questions, vectors, strict=True):
        for label, config in configs.items():
            started = time.perf_counter()
            index.search(question, config=config, query_vector=vector)
            timings[label].append(time.perf_counter() - started)

    print(
        f"\nRecall query in process, {args.facts} facts, {len(questions)} questions"
        f" (load average {os.getloadavg()[0]:.1f})\n"
    )
    print(f"{'configuration':<32} {'p50 ms':>8} {'p95 ms':>8}")
    print("-" * 50)
    for label, values in timings.items():
        values.sort()
        p50 = values[len(values) // 2] * 1000
        p95 = values[int(len(values) * 0.95)] * 1000
        print(f"{label:<32} {p50:>8.1f} {p95:>8.1f}")


if __name__ == "__main__":
    main()
