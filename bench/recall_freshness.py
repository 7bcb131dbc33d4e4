"""From ``/cache`` to found: how long a turn takes to come back from ``/query_memory`` (issue 50).

    .venv/bin/python bench/recall_freshness.py [--warm 5] [--starts 3] [--timeout 90]

The server is started as ``make run`` starts it (HTTP workers and the task cluster, vectors on, no LLM
provider) on a fresh SQLite database. Each trial is a new character given a short conversation (a
MemoryBank-style chat without the words below, one ``/cache`` call) and asked once (its index is built);
then one turn about a cat is cached (``POST /cache``) and ``/query_memory`` is polled every 0.1 s with a
one-character Chinese query (``猫``) and a query in another language (``cat``) until each returns the turn,
or ``--timeout`` seconds. Time is counted from the moment ``/cache`` answered. ``--starts`` trials each
seed their character, restart the server and cache the turn with the first ``/cache`` it takes (the
first minute after a start: its workers may still load the model); ``--warm`` trials then run on the
server once it has been up for ``--settle`` seconds more. Prints p50 / p95 / max per query and phase,
and the misses. On this shared 2-core machine the times are noisy.
"""

from __future__ import annotations

import argparse
import http.client
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.recall_speed import percentile  # noqa: E402
from tests.support.server_process import (  # noqa: E402
    ServerProcess,
    history_body,
    http_call,
    provision_database,
)

QUERIES = (("猫", "one CJK character"), ("cat", "another language"))
SEED = (
    ("human", "今天下班路上下了很大的雨，我没带伞，全身都湿透了。"),
    ("ai", "辛苦了，回家赶紧洗个热水澡，别着凉了。"),
    ("human", "我最近在学做菜，昨天试着做了红烧肉，味道还不错。"),
    ("ai", "好厉害！下次可以试试糖醋排骨。"),
    ("human", "周末打算和朋友去爬山，听说山顶的风景很美。"),
    ("ai", "记得带够水和防晒，注意安全。"),
    ("human", "我在准备一个重要的考试，压力有点大。"),
    ("ai", "一步一步来，你已经准备得很充分了。"),
)


def turn_text(marker: int) -> str:
    return f"我家的猫今天把客厅的花瓶打翻了，花瓶是第{marker}号。"


def cache(server: ServerProcess, name: str, messages: list[tuple[str, str]], *, retry: float = 0.0) -> None:
    """``POST /cache``; with ``retry``, sent again until the server takes it (a server still starting
    refuses it, or is not listening yet) for at most that many seconds."""
    body = history_body([{"type": kind, "data": {"content": text}} for kind, text in messages], "zh")
    deadline = time.monotonic() + retry
    while True:
        try:
            answer = http_call(server.port, "POST", f"/cache/{name}", body, timeout=60)
        except (OSError, http.client.HTTPException):
            answer = None
        if answer is not None and answer.status == 200:
            return
        if time.monotonic() >= deadline:
            detail = f"{answer.status} {answer.text[:300]}" if answer is not None else "no answer"
            raise RuntimeError(f"/cache/{name}: {detail}")
        time.sleep(0.05)


def found(server: ServerProcess, name: str, query: str, marker: str) -> bool:
    answer = http_call(server.port, "POST", f"/query_memory/{name}", {"query": query}, timeout=60)
    if answer.status != 200:
        return False
    body = answer.json()
    return any(marker in str(r.get("text", "")) for r in body.get("results", []))


def seed(server: ServerProcess, name: str) -> None:
    """A character with a short conversation, asked once (its index is built, and saved)."""
    cache(server, name, list(SEED))
    http_call(server.port, "POST", f"/query_memory/{name}", {"query": "考试"}, timeout=120)


def poll(
    server: ServerProcess, name: str, marker: int, timeout: float, *, retry: float = 0.0
) -> dict[str, float | None]:
    """Cache the turn about a cat, then seconds from ``/cache``'s answer to each query finding it
    (None: not within the timeout)."""
    cache(server, name, [("human", turn_text(marker))], retry=retry)
    cached = time.monotonic()
    waiting = {q for q, _ in QUERIES}
    times: dict[str, float | None] = {q: None for q, _ in QUERIES}
    while waiting and time.monotonic() - cached < timeout:
        for query in sorted(waiting):
            if found(server, name, query, f"第{marker}号"):
                times[query] = time.monotonic() - cached
                waiting.discard(query)
        time.sleep(0.1)
    return times


def summary(values: list[float | None]) -> str:
    got = [v for v in values if v is not None]
    missed = len(values) - len(got)
    if not got:
        return f"none found ({missed} of {len(values)} missed)"
    text = f"p50 {statistics.median(got):.2f} / p95 {percentile(got, 0.95):.2f} / max {max(got):.2f} s"
    return text + (f", {missed} of {len(values)} not found" if missed else f" (n={len(got)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", type=int, default=5, help="trials on a server up for a minute")
    parser.add_argument("--starts", type=int, default=3, help="trials right after a server start")
    parser.add_argument("--settle", type=float, default=60.0, help="seconds up before the warm trials")
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for a turn")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="nekomem-recall-freshness-"))
    database = provision_database(work, postgres_url=None)
    server = ServerProcess(database=database, var_dir=work / "var")
    results: dict[str, dict[str, list[float | None]]] = {"warm": {}, "start": {}}
    marker = 100
    try:
        server.start(ready_timeout=180)
        for _ in range(args.starts):
            # A character the server knew before it stopped (index saved); its next turn comes in as
            # soon as the restarted server answers, while its workers still load the model.
            marker += 1
            seed(server, f"start{marker}")
            server.stop()
            server.start(wait_ready=False)
            # The first /cache the server takes: not after /health, which can lag the model load.
            times = poll(server, f"start{marker}", marker, args.timeout, retry=180)
            print(f"after a start, trial {marker}: {times}", flush=True)
            for query, seconds in times.items():
                results["start"].setdefault(query, []).append(seconds)
        time.sleep(args.settle)  # past its first minute: the warm trials are not start-up ones
        for _ in range(args.warm):
            marker += 1
            seed(server, f"warm{marker}")
            times = poll(server, f"warm{marker}", marker, args.timeout)
            print(f"warm, trial {marker}: {times}", flush=True)
            for query, seconds in times.items():
                results["warm"].setdefault(query, []).append(seconds)
    finally:
        server.stop()
        database.drop()

    print("\nFrom /cache answered to /query_memory returning the turn (a character each trial, HTTP)\n")
    head = f"{'query':<24} {'server':<30} {'time to found':<48}"
    print(head)
    print("-" * len(head))
    for query, label in QUERIES:
        for phase, phase_label in (
            ("warm", "warm (up for a minute)"),
            ("start", "just after a start"),
        ):
            values = results[phase].get(query, [])
            if values:
                print(f"{query + ' (' + label + ')':<24} {phase_label:<30} {summary(values):<48}")
    print("\ntarget: one CJK character at once, another language ≤ 2 s (issue 50)")


if __name__ == "__main__":
    main()
