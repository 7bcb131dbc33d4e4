"""Recall at scale on realistic data, as a user meets it: import, backfill beside queries, restarts.

    .venv/bin/python bench/recall_realistic.py [--facts 100000] [--raw 100000] [--uncovered-raw 20000]
                                               [--backfill-minutes 6]

One character gets ``--facts`` distinct facts made of real conversation text (openings of the
development sets' turns joined, ~30 words each) and ``--raw`` distinct raw-log rows (each a turn, past
the first pass over the turns with the opening of another turn added, in ``time_indexed.db``), as the
original leaves them: no ``cursors.json``, so the import counts the log up to the newest fact as
extracted. The last ``--uncovered-raw`` turns came after it (weeks of chat without a provider): they
are recall's raw-turn pool and need vectors too. ``--uncovered-raw`` equal to ``--raw`` puts the whole
log after the facts (a log nobody extracted). The server is started as ``make run`` starts it (HTTP
workers and the task cluster, vectors on, no LLM provider) on a fresh SQLite database; the directory
is imported with ``manage.py import_memory`` while it runs, and everything else goes through HTTP:

- import time (the command, wall clock);
- the embedding backfill (the cluster's schedule) until every fact and every raw turn has a vector, or
  the time allowed (facts come first: the time they were done is reported too);
- ``/query_memory`` latency while the backfill runs (one client, probe questions of every set);
- warm, right after the backfill (or when the time allowed ran out, then labelled so), and at rest:
  once the server's processes stopped using the CPU (the task cluster's work that the last vectors
  start, the paraphrase pairs of every fact, takes minutes at 100k), at most ``--rest-wait`` seconds;
- the first query after one new fact (written by another process, as extraction would), per worker;
- the first query after a server restart (the workers load their saved index).

Needs ../shared/data (or NEKOMEM_SHARED_DATA). On a shared 2-core machine the numbers are noisy.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import quote

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.original_folder import original_fact  # noqa: E402
from bench.recall_speed import percentile, questions  # noqa: E402
from tests.support.dataset import SETS, turns  # noqa: E402
from tests.support.server_process import ServerProcess, provision_database  # noqa: E402

NAME = "realistic"
WORDS_PER_FACT = 30
T0 = datetime(2025, 1, 1, 9, 0)
ADD_FACT = (
    "from facts.services import FactDraft, facts_persist; "
    "from nekomem.characters.models import Character; "
    "facts_persist(character_id=Character.objects.get(name={name!r}).pk, drafts=[FactDraft(text={text!r})])"
)


def words_of(text: str) -> list[str]:
    # Chinese has no spaces: a run of 2 characters stands for a word.
    if " " in text.strip():
        return text.split()
    compact = "".join(text.split())
    return [compact[i : i + 2] for i in range(0, len(compact), 2)]


def fact_texts(n: int, pool: list[str]) -> list[str]:
    """``n`` distinct texts of ~30 words, each the openings of turns taken with a stride of its own."""
    out: list[str] = []
    seen: set[str] = set()
    i = 0
    while len(out) < n:
        stride = 1 + (i * 7919) % 97
        words: list[str] = []
        j = i
        while len(words) < WORDS_PER_FACT:
            words += words_of(pool[j % len(pool)])[: 4 + (i + j) % 5]
            j += stride
        joiner = " " if " " in pool[i % len(pool)] else ""
        text = joiner.join(words[:WORDS_PER_FACT])
        i += 1
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def raw_texts(n: int, pool: list[str]) -> list[str]:
    """``n`` distinct turns: the pool's turns, then each with the opening of another turn after it."""
    out: list[str] = []
    seen: set[str] = set()
    i = 0
    while len(out) < n:
        text = pool[i % len(pool)]
        if i >= len(pool):
            joiner = " " if " " in text.strip() else ""
            extra = words_of(pool[(i * 31 + i // len(pool)) % len(pool)])[: 3 + i % 6]
            text = text + joiner + joiner.join(extra)
        i += 1
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


def write_directory(root: Path, *, facts: int, raw: int, uncovered: int) -> None:
    pool = [t["text"] for s in SETS for t in turns(s) if t["text"].strip()]
    folder = root / NAME
    folder.mkdir(parents=True, exist_ok=True)
    entries = []
    for i, text in enumerate(fact_texts(facts, pool)):
        when = T0 + timedelta(minutes=i)
        digest = hashlib.sha256(f"{i}\0{text}".encode()).hexdigest()
        entries.append(
            original_fact(
                fact_id=f"fact_{when:%Y%m%d%H%M%S}_{digest[:8]}", text=text, digest=digest, when=when
            )
        )
    (folder / "facts.json").write_text(json.dumps(entries, ensure_ascii=False), encoding="utf-8")
    db = sqlite3.connect(folder / "time_indexed.db")
    db.execute(
        "CREATE TABLE time_indexed_original"
        " (id INTEGER PRIMARY KEY, session_id TEXT, message TEXT, timestamp DATETIME)"
    )
    rows = []
    newest_fact = T0 + timedelta(minutes=max(facts - 1, 0))
    covered = raw - uncovered
    # The covered turns spread over the facts' time (each fact came after its turns), the rest after it.
    step = (newest_fact - T0) / covered if covered else timedelta(0)
    for i, text in enumerate(raw_texts(raw, pool)):
        message = {"type": "human" if i % 2 == 0 else "ai", "data": {"content": text}}
        when = T0 + step * i if i < covered else newest_fact + timedelta(seconds=30 * (i - covered + 1))
        rows.append((f"session-{i // 20}", json.dumps(message, ensure_ascii=False), when.isoformat(" ")))
    db.executemany(
        "INSERT INTO time_indexed_original (session_id, message, timestamp) VALUES (?, ?, ?)", rows
    )
    db.commit()
    db.close()


class Client:
    def __init__(self, port: int) -> None:
        self.port = port
        self.conn = self._connection()
        self.building: list[float] = []  # latencies of the answers "index still building" (no results)
        # Answers from the rows holding the query's words while the index is built (``index_building``),
        # and how many of them had no result.
        self.interim: list[float] = []
        self.interim_empty = 0
        self.partial = False  # the last answer was one of those two kinds

    def _connection(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)

    def reconnect(self) -> None:
        """A new connection: the server closes one left idle (a wait for the server to go idle)."""
        self.conn.close()
        self.conn = self._connection()

    def ask(self, query: str) -> float:
        body = json.dumps({"query": query}, ensure_ascii=False).encode()
        started = time.perf_counter()
        try:
            self.conn.request(
                "POST", f"/query_memory/{quote(NAME)}", body, {"Content-Type": "application/json"}
            )
            response = self.conn.getresponse()
            payload = json.loads(response.read())
        except (http.client.HTTPException, OSError):
            self.conn = self._connection()
            raise
        elapsed = (time.perf_counter() - started) * 1000
        building = payload.get("error_code") == "recall_index_building"
        if response.status != 200 or ("error_code" in payload and not building):
            raise RuntimeError(f"bad answer {response.status}: {payload}")
        if building:
            self.building.append(elapsed)
        elif payload.get("index_building"):
            self.interim.append(elapsed)
            self.interim_empty += not payload.get("results")
        self.partial = building or bool(payload.get("index_building"))
        return elapsed


def vectors_done(database) -> tuple[int, int]:
    """(facts, raw turns) with a vector."""
    facts = database.query("SELECT COUNT(*) FROM facts_fact WHERE embedding <> ''")
    turns = database.query("SELECT COUNT(*) FROM recall_rawturnvector WHERE embedding <> ''")
    return int(facts[0][0]), int(turns[0][0])


def tokens_pending(database) -> int:
    """Facts the dedup token index does not hold yet (a large import leaves them to a job)."""
    return int(database.query("SELECT COUNT(*) FROM facts_fact WHERE dedup_key = ''")[0][0])


def wait_until_idle(
    server: ServerProcess, *, timeout: float, window: float = 5.0, share: float = 0.05
) -> float | None:
    """Seconds until the server's processes used under ``share`` of a core over ``window`` (its
    background work done); None when ``timeout`` passed first."""

    def cpu_seconds() -> float:
        return sum(info.cpu_seconds for info in server.processes().values())

    started = time.monotonic()
    while time.monotonic() - started < timeout:
        before = cpu_seconds()
        time.sleep(window)
        if cpu_seconds() - before < share * window:
            return time.monotonic() - started
    return None


class TokenIndex:
    """When the import's dedup token index was complete, seconds after the import returned."""

    def __init__(self, database, imported: float) -> None:
        self.database, self.imported = database, imported
        self.done_at: float | None = None

    def check(self) -> None:
        if self.done_at is None and not tokens_pending(self.database):
            self.done_at = time.monotonic() - self.imported


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--raw", type=int, default=100_000)
    parser.add_argument(
        "--uncovered-raw", type=int, default=20_000, help="raw turns after the newest fact (need vectors)"
    )
    parser.add_argument("--backfill-minutes", type=float, default=6.0)
    parser.add_argument(
        "--workers", type=int, default=0, help="NEKOMEM_WORKERS for the server (0: its default)"
    )
    parser.add_argument("--restarts", type=int, default=3, help="server restarts for the last row")
    parser.add_argument(
        "--rest-wait",
        type=float,
        default=900.0,
        help="seconds the server may take to go idle before 'at rest'",
    )
    args = parser.parse_args()
    args.uncovered_raw = min(args.uncovered_raw, args.raw)

    work = Path(tempfile.mkdtemp(prefix="nekomem-recall-realistic-"))
    started = time.monotonic()
    write_directory(work / "import", facts=args.facts, raw=args.raw, uncovered=args.uncovered_raw)
    print(
        f"data written in {time.monotonic() - started:.0f}s: {args.facts} facts, {args.raw} raw rows"
        f" ({args.uncovered_raw} after the newest fact)",
        flush=True,
    )
    database = provision_database(work, postgres_url=None)
    env = {"NEKOMEM_WORKERS": str(args.workers)} if args.workers else {}
    server = ServerProcess(database=database, var_dir=work / "var", extra_env=env)
    qs = questions()
    results: dict[str, tuple[str, str, str]] = {}
    try:
        server.start(ready_timeout=180)
        client = Client(server.port)

        started = time.monotonic()
        server.manage("import_memory", str(work / "import"), timeout=3600)
        import_seconds = time.monotonic() - started
        results["import"] = ("import_memory of the directory", f"{import_seconds:.0f} s", "≤ 30 s")
        token_index = TokenIndex(database, time.monotonic())
        print(f"imported in {import_seconds:.0f}s ({tokens_pending(database)} facts unindexed)", flush=True)

        # The first queries after the import: the index builds in the background meanwhile (the task
        # cluster), and a query answers from the rows holding its words until it is there.
        started = time.monotonic()
        first = [client.ask(qs[0])]
        while client.partial and time.monotonic() - started < 900:
            time.sleep(0.2)
            token_index.check()
            first.append(client.ask(qs[len(first) % len(qs)]))
        waited = time.monotonic() - started
        interim = client.interim
        meanwhile = (
            f"p50 {statistics.median(interim):.0f} / p95 {percentile(interim, 0.95):.0f} ms"
            f" ({len(interim)}, {client.interim_empty} empty)"
            if interim
            else "none"
        )
        results["after_import"] = (
            "index answering after the import returned",
            f"{waited:.1f} s; meanwhile {meanwhile}"
            + (f", {len(client.building)} 'building'" if client.building else ""),
            "≤ 30 s, 0 empty",
        )
        print(f"index answering {waited:.1f}s after the import; meanwhile {meanwhile}", flush=True)
        after = [client.ask(qs[j % len(qs)]) for j in range(100)]
        results["right_after"] = (
            "/query_memory right after the index is ready",
            f"p50 {statistics.median(after):.1f} / p95 {percentile(after, 0.95):.1f} ms",
            "—",
        )
        client.building.clear()

        during: list[float] = []
        backfill_started = time.monotonic()
        deadline = backfill_started + args.backfill_minutes * 60
        facts_done, turns_done = vectors_done(database)
        facts_at: float | None = None
        checked = time.monotonic()
        i = 0
        while (facts_done < args.facts or turns_done < args.uncovered_raw) and time.monotonic() < deadline:
            with contextlib.suppress(http.client.HTTPException, OSError):
                during.append(client.ask(qs[i % len(qs)]))
            i += 1
            time.sleep(0.2)
            if time.monotonic() - checked > 10:
                (facts_done, turns_done), checked = vectors_done(database), time.monotonic()
                token_index.check()
                if facts_at is None and facts_done >= args.facts:
                    facts_at = checked - backfill_started
                print(
                    f"  backfill: {facts_done} fact and {turns_done} raw-turn vectors after"
                    f" {checked - backfill_started:.0f}s",
                    flush=True,
                )
        backfill_seconds = time.monotonic() - backfill_started
        facts_done, turns_done = vectors_done(database)
        if facts_at is None and facts_done >= args.facts:
            facts_at = backfill_seconds
        finished = facts_done >= args.facts and turns_done >= args.uncovered_raw
        done = facts_done + turns_done
        rate = done / backfill_seconds if backfill_seconds else 0.0
        backfill = (
            f"{backfill_seconds:.0f} s"
            if finished
            else f"{done} of {args.facts + args.uncovered_raw} in {backfill_seconds:.0f} s"
        )
        backfill += (
            f" ({rate:.0f}/s; facts {'in ' + format(facts_at, '.0f') + ' s' if facts_at else 'not done'})"
        )
        results["backfill"] = ("embedding backfill to every vector (facts + raw turns)", backfill, "≤ 2 min")
        token_index.check()
        results["tokens"] = (
            "dedup token index complete after the import returned",
            "not yet" if token_index.done_at is None else f"{token_index.done_at:.0f} s",
            "—",
        )
        if during:
            p50, p95 = statistics.median(during), percentile(during, 0.95)
            value = f"p50 {p50:.1f} / p95 {p95:.1f} / max {max(during):.0f} ms (n={len(during)})"
            if client.building:
                value += f", {len(client.building)} 'building'"
        else:
            value = "no answer"
        results["during"] = ("/query_memory while the backfill runs", value, "p95 ≤ 60 ms")

        for q in qs[:16]:  # every worker catches up with the last vectors
            client.ask(q)
        rest = [client.ask(qs[j % len(qs)]) for j in range(200)]
        label = "warm, right after the backfill" if finished else "warm, backfill still running"
        results["right_after_backfill"] = (
            f"/query_memory {label}",
            f"p50 {statistics.median(rest):.1f} / p95 {percentile(rest, 0.95):.1f} ms",
            "p95 ≤ 30 ms",
        )
        # The last vectors start the task cluster's own work (the paraphrase pairs of 100k facts,
        # index saves) for minutes: the server is at rest once its processes stop using the CPU.
        idle_after = wait_until_idle(server, timeout=args.rest_wait)
        client.reconnect()
        for q in qs[:16]:
            client.ask(q)
        rest = [client.ask(qs[j % len(qs)]) for j in range(400)]
        idle = (
            f"idle after {idle_after:.0f} s"
            if idle_after is not None
            else f"NOT idle in {args.rest_wait:.0f} s"
        )
        results["rest"] = (
            f"/query_memory at rest, warm ({idle})",
            f"p50 {statistics.median(rest):.1f} / p95 {percentile(rest, 0.95):.1f} ms",
            "p95 ≤ 10 ms",
        )

        after_fact = []
        for k in range(3):
            server.manage(
                "shell", "-c", ADD_FACT.format(name=NAME, text=f"主人第{k}次提到新的爱好：陶艺和手冲咖啡")
            )
            after_fact.append(client.ask(qs[k]))
            after_fact += [client.ask(qs[k + j]) for j in range(1, 4)]  # the other workers' first too
        results["new_fact"] = (
            "first query after one new fact (any worker)",
            f"max {max(after_fact):.1f} / median {statistics.median(after_fact):.1f} ms",
            "≤ 50 ms",
        )

        firsts, building = [], 0
        for _ in range(args.restarts):
            server.stop()
            server.start(ready_timeout=180)
            # Two clients (two connections: granian hands them to different workers), as soon as the
            # first worker answers /health.
            clients = [Client(server.port), Client(server.port)]
            firsts += [c.ask(qs[j]) for j, c in enumerate(clients)]
            building += sum(len(c.building) for c in clients)
        results["restart"] = (
            f"first query after a server start ({args.restarts} starts, 2 connections)",
            f"max {max(firsts):.0f} / median {statistics.median(firsts):.0f} ms"
            + (f", {building} 'building'" if building else ""),
            "≤ 1000 ms",
        )
    finally:
        server.stop()
        database.drop()

    print(
        f"\nRecall at scale: {args.facts} facts + {args.raw} raw-log rows ({args.uncovered_raw} not yet"
        " extracted), one character, HTTP under make run\n"
    )
    head = f"{'what':<56} {'measured':<44} {'target':<12}"
    print(head)
    print("-" * len(head))
    keys = ["import", "after_import", "tokens", "right_after", "backfill", "during", "right_after_backfill"]
    keys += ["rest", "new_fact", "restart"]
    for key in keys:
        if key in results:
            what, value, target = results[key]
            print(f"{what:<56} {value:<44} {target:<12}")
    print(f"\n(load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
