"""Worker RSS under recall-index load/evict churn (issue 35): does RSS stay near what the cache holds?

    nice -n 19 .venv/bin/python bench/index_cache_rss.py                  # 300 characters × 2 000 facts
    .venv/bin/python bench/index_cache_rss.py --characters 60 --rounds 2  # a small try

One process, no server and no database: ``--characters`` synthetic indexes (``--facts`` facts each, texts
drawn from a mixed zh/en word pool, 512-d unit vectors) are built once and saved as snapshots, as
``recall_indexes_prepare`` leaves them. Then ``--rounds`` sweeps load every character in a shuffled
order from its snapshot into the real cache (``recall.index_cache``), whose byte cap is lowered to
``--cap-mb`` so that most loads evict another character: the churn of a worker serving more characters
than it keeps. The sweeps run twice, in two child processes: as the cache does it, and with glibc's
``malloc_trim`` after every store (the allocator-fragmentation hypothesis). The table gives, after each
sweep, the bytes the cache accounts for (``nbytes``, its cap's measure), the spare rows inside them
(matrix room for appends), the process's RSS, and the seconds of the sweep.

Measured Dec 2026 (2 cores, 300 × 2 000, cap 256 MiB, 4 sweeps), RSS after each sweep: before the
spare rows were counted and cut to max(128, n/64), the cache accounted 254 MiB (plus 106 MiB of spare
rows it did not count) and RSS was 502 MiB (no trim) / 476 MiB (trim), flat from the first sweep to
the fourth; after, 252 MiB (12 of them spare rows) and 387 / 367 MiB.
RSS does not creep under churn; it sat past the cap because the cap did not count the matrices' spare
rows (1 024 of them for a 2 000-row character). A trim at every eviction gives back ~20 MiB for
+5 ms an eviction; a trim once per 32 MiB evicted gave back nothing measurable: not adopted.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nekomem.settings")

WORDS_ZH = list("主人喜欢猫狗咖啡周末公园散步工作加班学习日语钢琴电影旅行海边生日妈妈朋友晚饭")
WORDS_EN = ["master", "likes", "cats", "dogs", "coffee", "weekend", "park", "walk", "work", "late", "study"]
DIM = 512


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def candidates(seed: int, facts: int):
    import numpy as np

    from recall.engine import Candidate

    rng = random.Random(seed)
    vectors = np.random.default_rng(seed).standard_normal((facts, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for i in range(facts):
        words = WORDS_ZH if i % 2 else WORDS_EN
        text = (" " if words is WORDS_EN else "").join(rng.choices(words, k=rng.randint(6, 18)))
        yield Candidate(
            id=f"fact_{seed}_{i}",
            text=f"{text} {rng.randint(0, 10**6)}",
            tier="fact",
            created_at=start + timedelta(minutes=i),
            vector=vectors[i],
            pool="facts",
            key=i + 1,
        )


def prepare(folder: Path, characters: int, facts: int) -> None:
    from recall.engine import RecallIndex
    from recall.snapshots import snapshot_write

    started = time.monotonic()
    for cid in range(1, characters + 1):
        path = folder / f"{cid}.idx"
        if not path.exists():
            snapshot_write(path, version=1, index=RecallIndex(candidates(cid, facts), dim=DIM))
    print(f"# {characters} snapshots ready in {time.monotonic() - started:.0f} s", file=sys.stderr)


def churn(folder: Path, characters: int, rounds: int, cap_mb: int, trim: bool) -> None:
    """Child: load every snapshot ``rounds`` times through the cache; print one row per sweep."""
    import django

    django.setup()
    from nekomem.embeddings import trim_heap
    from recall import index_cache
    from recall.index_cache import entries as cache_entries
    from recall.snapshots import snapshot_read

    cache_entries.MAX_CACHE_BYTES = cap_mb * 1024**2
    rng = random.Random(7)
    print(f"{'trim' if trim else 'none'}\t0\t0\t0\t{rss_mb():.0f}\t0", flush=True)
    for sweep in range(1, rounds + 1):
        order = list(range(1, characters + 1))
        rng.shuffle(order)
        started = time.monotonic()
        for cid in order:
            loaded = snapshot_read(folder / f"{cid}.idx")
            assert loaded is not None
            version, index = loaded
            entry = cache_entries._Entry(version=version, model_id=None, stop_names=(), index=index)
            cache_entries._store(cid, entry)
            if trim:
                trim_heap()
        gc.collect()
        usage = index_cache.usage()
        seconds = time.monotonic() - started
        mode = "trim" if trim else "none"
        spare = sum(_spare_bytes(e.index) for e in list(index_cache._cache.values()))
        print(
            f"{mode}\t{sweep}\t{usage.bytes / 2**20:.0f}\t{spare / 2**20:.0f}\t{rss_mb():.0f}\t{seconds:.1f}",
            flush=True,
        )


def _spare_bytes(index) -> int:
    """Bytes of the matrices' spare rows (``recall.engine.vectors.with_room``), walked here so that the
    bench runs on a checkout from before ``held_nbytes`` too."""

    def held(array) -> int:
        while getattr(array.base, "nbytes", None) is not None and hasattr(array.base, "base"):
            array = array.base
        return array.nbytes

    arrays = (index.matrix, index.coarse, index.q8, index.q8_scale)
    return sum(held(a) - a.nbytes for a in arrays if a is not None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--characters", type=int, default=300)
    parser.add_argument("--facts", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--cap-mb", type=int, default=256, help="the cache's byte cap (production: 2048)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "nekomem-index-cache-rss")
    parser.add_argument("--child", choices=["none", "trim"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    folder = args.work / f"{args.characters}x{args.facts}"
    if args.child:
        churn(folder, args.characters, args.rounds, args.cap_mb, trim=args.child == "trim")
        return
    import django

    django.setup()
    folder.mkdir(parents=True, exist_ok=True)
    prepare(folder, args.characters, args.facts)
    rows: list[list[str]] = []
    for mode in ("none", "trim"):
        command = [sys.executable, __file__, *sys.argv[1:], "--child", mode]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        rows += [line.split("\t") for line in output.splitlines() if line.count("\t") == 5]
    print(
        f"{args.characters} characters × {args.facts} facts, {DIM}-d vectors, cap {args.cap_mb} MiB, "
        f"{args.rounds} sweeps of loads from snapshots (each load past the cap evicts)"
    )
    header = ("after a store", "sweep", "cache MiB", "spare MiB", "RSS MiB", "RSS - cache", "sweep s")
    print(
        f"{header[0]:<16}{header[1]:>6}{header[2]:>11}{header[3]:>11}{header[4]:>9}{header[5]:>13}{header[6]:>9}"
    )
    for mode, sweep, cache, spare, rss, seconds in rows:
        label = "malloc_trim" if mode == "trim" else "nothing"
        print(f"{label:<16}{sweep:>6}{cache:>11}{spare:>11}{rss:>9}{int(rss) - int(cache):>13}{seconds:>9}")


if __name__ == "__main__":
    main()
