"""``/query_memory`` latency over HTTP at 1k, 10k and 100k facts, beside a rank-bm25 scorer; server RSS;
embedding backfill rate.

    .venv/bin/python bench/recall_speed.py [--sizes 1000 10000 100000] [--queries 300] [--configs A B]

Facts are built from the turns of every development set (each text made distinct by appending a
fragment of another turn once the turns run out), written with ``bulk_create`` into a fresh SQLite
database, and given vectors by the real backfill (timed: the backfill rate). The server is then started
as ``make run`` starts it (granian workers, vectors on) and queried over HTTP with the probe questions
of every set, one client at a time, after a warm-up that builds every worker's index. rank-bm25
(``BM25Okapi`` over the same tokens) scores the same queries in this process: scoring alone, no HTTP,
which favours it. Each size gets a freshly started server, so the RSS reported per size is that of the
HTTP worker that served it (the largest process of the server) holding the model and that one
character's index: "server RSS with the model and a 100k-fact index" is the 100k row. ``--configs``
asks every question under each named configuration in turn (``recall/engine/configs.py``; ``default``:
no ``?config``), so a change and what it replaced are timed under the same machine load.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.shared_data import SETS, probes, turns  # noqa: E402
from tests.support.server_process import ServerProcess, provision_database  # noqa: E402


def texts_for(n: int) -> list[str]:
    pool = [t["text"] for s in SETS for t in turns(s)]
    out = []
    for i in range(n):
        base = pool[i % len(pool)]
        if i >= len(pool):
            other = pool[(i * 7919) % len(pool)]
            base = f"{base} {other[: 12 + i % 30]}"
        out.append(base)
    return out


def questions() -> list[str]:
    rows: list[str] = []
    for s in SETS:
        rows.extend(probe["question"] for probe in probes(s))
    return rows


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def worker_rss_mb(server: ServerProcess) -> float:
    """Largest resident set among the server's processes (the HTTP worker holding the index and model)."""
    assert server.process is not None
    best = 0.0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            pgid = os.getpgid(int(pid))
        except (OSError, ProcessLookupError):
            continue
        if pgid != server.process.pid:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                best = max(best, int(line.split()[1]) / 1024)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", type=int, default=[1000, 10000, 100000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--configs", nargs="+", default=["default"], help="named configurations to time")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="nekomem-recall-speed-"))
    database = provision_database(work, postgres_url=None)
    os.environ["DATABASE_URL"] = database.url
    os.environ["DJANGO_SETTINGS_MODULE"] = "nekomem.settings"
    os.environ.setdefault("NEKOMEM_LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command
    from django.utils import timezone
    from rank_bm25 import BM25Okapi

    from facts.models import Fact
    from nekomem.characters.models import Character
    from nekomem.language.tokens import search_tokens
    from recall.backfill import embedding_backfill

    call_command("migrate", verbosity=0)
    now = timezone.now()
    embedded = 0
    backfill_seconds = 0.0
    for size in args.sizes:
        character = Character.objects.create(name=f"speed{size}")
        facts = []
        for i, text in enumerate(texts_for(size)):
            digest = hashlib.sha256(f"{size}\0{i}\0{text}".encode()).hexdigest()
            when = now - timedelta(minutes=size - i)
            facts.append(
                Fact(
                    character=character,
                    fact_id=f"fact_{when:%Y%m%d%H%M%S}_{digest[:8]}_{i}",
                    text=text,
                    hash=digest[:16],
                    created_at=when,
                    event_start_at=when,
                    signal_processed=True,
                )
            )
        Fact.objects.bulk_create(facts, batch_size=5000)
        report = embedding_backfill(character_id=character.pk, limit=size, queue_pairs=False)
        embedded += report.embedded
        backfill_seconds += report.seconds
        print(f"speed{size}: {size} facts, backfill {report.embedded} in {report.seconds:.1f}s", flush=True)
    from django.db import connections

    connections.close_all()

    qs = questions()
    rows: list[tuple[int, dict[str, list[float]], list[float]]] = []
    rss: dict[int, float] = {}
    try:
        for size in args.sizes:
            # INFO for the server: the bench waits for each worker's "warm-ups done" line.
            server = ServerProcess(
                database=database, var_dir=work / f"var{size}", extra_env={"NEKOMEM_LOG_LEVEL": "INFO"}
            )
            try:
                server.start(ready_timeout=120)
                # At rest: every worker has finished its start-up warm-ups (the model and the indexes
                # of recently active characters), which otherwise compete with the measured queries.
                server.wait_warm(timeout=600)
                conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)

                def ask(
                    name: str, query: str, config: str = "default", conn: http.client.HTTPConnection = conn
                ) -> float:
                    body = json.dumps({"query": query}, ensure_ascii=False).encode()
                    started = time.perf_counter()
                    headers = {"Content-Type": "application/json"}
                    named = "" if config == "default" else f"?config={quote(config)}"
                    conn.request("POST", f"/query_memory/{quote(name)}{named}", body, headers)
                    response = conn.getresponse()
                    payload = json.loads(response.read())
                    elapsed = (time.perf_counter() - started) * 1000
                    if response.status != 200 or "error_code" in payload:
                        raise RuntimeError(f"bad answer {response.status}: {payload}")
                    return elapsed

                name = f"speed{size}"
                for q in qs[:8]:  # warm-up: the serving worker builds its index and loads the model
                    ask(name, q)
                latencies: dict[str, list[float]] = {c: [] for c in args.configs}
                for i in range(args.queries):
                    # Each question's configurations in a turning order: the first to ask a question
                    # pays its embedding (later ones find it in the query cache).
                    shift = i % len(args.configs)
                    for config in args.configs[shift:] + args.configs[:shift]:
                        latencies[config].append(ask(name, qs[i % len(qs)], config))
                rss[size] = worker_rss_mb(server)
            finally:
                server.stop()
            corpus = [search_tokens(t) for t in texts_for(size)]
            scorer = BM25Okapi(corpus, k1=1.5, b=0.75)
            ref = []
            for i in range(min(args.queries, 60)):
                tokens = search_tokens(qs[i % len(qs)])
                started = time.perf_counter()
                scores = scorer.get_scores(tokens)
                sorted(range(len(scores)), key=lambda j: -scores[j])[:8]
                ref.append((time.perf_counter() - started) * 1000)
            rows.append((size, latencies, ref))
            print(f"measured {size}", flush=True)
    finally:
        database.drop()

    print("\n/query_memory over HTTP (hybrid, vectors on; one client) vs rank-bm25 scoring in-process\n")
    head = f"{'facts':>8} {'configuration':<22} {'p50 ms':>8} {'p95 ms':>8} {'rank-bm25 p50':>14}"
    head += f" {'rank-bm25 p95':>14} {'speed-up p50':>13} {'server RSS MB':>14}"
    print(head)
    print("-" * len(head))
    for size, by_config, ref in rows:
        for config, lat in by_config.items():
            p50, p95 = statistics.median(lat), percentile(lat, 0.95)
            r50, r95 = statistics.median(ref), percentile(ref, 0.95)
            line = f"{size:>8} {config[:22]:<22} {p50:>8.1f} {p95:>8.1f} {r50:>14.1f} {r95:>14.1f}"
            print(f"{line} {r50 / p50:>12.1f}x {rss[size]:>14.0f}")
    print()
    rate = embedded / backfill_seconds if backfill_seconds else 0.0
    if 100000 in rss:
        print(f"serving worker RSS with the model and the 100k index: {rss[100000]:.0f} MB (target ≤ 400)")
    print(f"embedding backfill: {embedded} facts in {backfill_seconds:.1f}s = {rate:.0f} facts/s", end="")
    print(" (target ≥ 1000)")
    for size, by_config, ref in rows:
        lat = by_config[args.configs[0]]  # the targets hold for the first configuration named
        if size == 100000:
            print(
                f"targets at 100k: p95 {percentile(lat, 0.95):.1f} ms (≤ 30), "
                f"{statistics.median(ref) / statistics.median(lat):.1f}x rank-bm25 (≥ 5)"
            )
        if size == 10000:
            print(f"target at 10k: p95 {percentile(lat, 0.95):.1f} ms (≤ 10)")


if __name__ == "__main__":
    main()
