"""What the raw-turn pool costs a realistic character's ranking, in process, and its answers to compare.

    .venv/bin/python bench/recall_raw_pool.py [--work /tmp/nekomem-raw-pool] [--facts 100000]
                                              [--raw 100000] [--uncovered-raw 20000] [--rounds 3]
                                              [--dump answers.json]

The character of ``bench/recall_realistic.py`` (its ``write_directory``), imported with
``import_memory`` into a SQLite file under ``--work`` and embedded with ``backfill``, once: a later run
with the same ``--work`` reuses it (minutes saved at 100k rows). The whole character's index (facts and
the uncovered raw turns) and one of its facts alone are built in process, every probe question's
vector computed once, and ``RecallIndex.search`` (the default configuration) timed on each index in
turn, ``--rounds`` times. ``--dump`` writes every question's hits on the whole index (id, score, each
path's rank and score, as ``repr``) as JSON: two commits' files compared with ``cmp`` tell whether a
change kept the answers bit for bit. Needs ../shared/data; on a shared machine the times are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from nekomem.runtime.native_threads import single_threaded_here  # noqa: E402

single_threaded_here()  # as the server's workers run numpy (before numpy is imported)

from bench.recall_realistic import NAME, write_directory  # noqa: E402
from bench.recall_speed import percentile, questions  # noqa: E402
from bench.scratch import django_on_scratch_database  # noqa: E402


def hit_record(hit: Any) -> list[Any]:
    """A hit as compared across commits: its id, score and each path's rank and score, exactly."""
    paths = sorted((path, found.rank, repr(found.score)) for path, found in hit.paths.items())
    return [hit.candidate.id, repr(hit.score), paths]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/nekomem-raw-pool"))
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--raw", type=int, default=100_000)
    parser.add_argument("--uncovered-raw", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dump", type=Path, help="write the whole index's hits here (JSON)")
    args = parser.parse_args()

    fresh = not (args.work / "bench.sqlite3").exists()
    if fresh:
        args.work.mkdir(parents=True, exist_ok=True)
        write_directory(
            args.work / "import", facts=args.facts, raw=args.raw, uncovered=min(args.uncovered_raw, args.raw)
        )
    django_on_scratch_database(args.work)
    from django.core.management import call_command

    if fresh:
        started = time.monotonic()
        call_command("import_memory", str(args.work / "import"), verbosity=0)
        call_command("backfill", verbosity=0)
        print(f"imported and embedded in {time.monotonic() - started:.0f} s", flush=True)

    from nekomem.embeddings import embedder_within, vector_space
    from recall.engine import DEFAULT, RecallIndex
    from recall.questions import asks_when
    from recall.selectors import fact_candidates, recall_character, recall_pools
    from recall.services.query import _query_vector, query_language

    character = recall_character(name=NAME)
    assert character is not None, "no realistic character in the database under --work"
    space = vector_space()
    embedder = embedder_within(120)
    assert space is not None and embedder is not None, "the ranking needs the embedding model"
    qs = list(dict.fromkeys(questions()))
    vectors = {q: _query_vector(embedder, q, DEFAULT, query_language(q, None)) for q in qs}
    indexes = {
        "facts + raw turns": RecallIndex(
            recall_pools(character_id=character.pk, space=space), stop_names=character.stop_names
        ),
        "facts alone": RecallIndex(
            fact_candidates(character_id=character.pk, space=space), stop_names=character.stop_names
        ),
    }

    def ask(index: RecallIndex, query: str) -> list[Any]:
        v = vectors[query]
        return index.search(
            query, config=DEFAULT, query_vector=v.query, query_scaled=v.scaled, asks_when=asks_when(query)
        )

    timings: dict[str, list[float]] = {name: [] for name in indexes}
    for _ in range(args.rounds):
        for name, index in indexes.items():
            for query in qs:
                started = time.perf_counter()
                ask(index, query)
                timings[name].append((time.perf_counter() - started) * 1000)
    print(f"\nRecallIndex.search, {len(qs)} probe questions x {args.rounds} rounds (ms, one process)\n")
    for name, index in indexes.items():
        ms = timings[name]
        print(
            f"{name:<20} {len(index):>7} rows  p50 {statistics.median(ms):.2f}"
            f"  p95 {percentile(ms, 0.95):.2f}  mean {statistics.mean(ms):.2f}"
        )
    if args.dump:
        whole = indexes["facts + raw turns"]
        answers = {
            query: [
                [
                    hit.candidate.id,
                    repr(hit.score),
                    sorted((p, h.rank, repr(h.score)) for p, h in hit.paths.items()),
                ]
                for hit in ask(whole, query)
                for paths in [hit.paths]
            ]
            for query in qs
        }
        args.dump.write_text(json.dumps(answers, ensure_ascii=False, sort_keys=True), encoding="utf-8")
        print(f"\nhits of {len(answers)} questions written to {args.dump}")
    print(f"(load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
