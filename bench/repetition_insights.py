"""Repetition insights: how long the analysis of 100 real companion replies takes.

    .venv/bin/python bench/repetition_insights.py [--runs 200]

For each development set with assistant replies, 100 consecutive assistant replies (across that set's
conversations, in order) are analysed ``--runs`` times by ``recent.repetition.repetition_analyse``, the
work ``POST /internal/memory/{name}/repetition_insights`` does after its one paged read of the raw log.
The table gives the replies' mean length, p50/p95 of one analysis and how many candidates it found;
the target is p95 < 50 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.shared_data import turns  # noqa: E402
from recent.repetition import MAX_MESSAGES, repetition_analyse  # noqa: E402

TARGET_P95_MS = 50.0
SETS = {"memorybank-en": "en", "memorybank-cn": "zh-CN", "locomo10": "en"}


def replies_of(name: str) -> list[str]:
    rows = sorted(turns(name), key=lambda t: (t["conv_id"], t["idx"]))
    assistant = [t["text"] for t in rows if t.get("role") == "assistant" and t.get("text")]
    if len(assistant) < MAX_MESSAGES:  # a set of two people talking: the second speaker's turns
        speakers = sorted({t["speaker"] for t in rows})
        assistant = [t["text"] for t in rows if t["speaker"] == speakers[-1] and t.get("text")]
    return assistant[:MAX_MESSAGES][::-1]  # newest first, as the route reads them


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    head = (
        f"{'set':<15} {'lang':<6} {'replies':>7} {'mean chars':>10} {'p50 ms':>8} {'p95 ms':>8} {'found':>6}"
    )
    print(head)
    print("-" * len(head))
    worst = 0.0
    for name, language in SETS.items():
        replies = replies_of(name)
        repetition_analyse(replies=replies, language=language)  # warm-up (regex compile, imports)
        timings = []
        for _ in range(args.runs):
            started = time.perf_counter()
            result = repetition_analyse(replies=replies, language=language)
            timings.append((time.perf_counter() - started) * 1000)
        timings.sort()
        p95 = timings[int(len(timings) * 0.95) - 1]
        worst = max(worst, p95)
        mean_chars = statistics.mean(len(r) for r in replies)
        print(
            f"{name:<15} {language:<6} {len(replies):>7} {mean_chars:>10.0f} "
            f"{statistics.median(timings):>8.2f} {p95:>8.2f} {len(result['candidates']):>6}"
        )
    verdict = "meets" if worst < TARGET_P95_MS else "MISSES"
    print(f"\nworst p95 {worst:.2f} ms: {verdict} the target of p95 < {TARGET_P95_MS:.0f} ms")


if __name__ == "__main__":
    main()
