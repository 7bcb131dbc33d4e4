"""Mixed load and faults against the real server (issue 14): what a chat server meets on a bad day.

The server is started exactly as ``make run`` starts it, on a fresh database. 16 clients (threads,
one keep-alive connection each) each play a chat: a ``/cache`` turn, a ``/query_memory`` and a
``/new_dialog`` in the proportions 2 : 1 : 1, with a think time that offers ``--rate`` requests a
second in all; each client starts at a random moment and draws its pauses around that think time, as
independent users do (``--lockstep``: the same fixed pause for all, started together). Every turn
carries a unique marker, so afterwards the database tells which acknowledged turns were stored, and
how often. Phases (``--phases``):

- ``mixed``: the load for ``--minutes``; latency per route, errors, and the RSS of the HTTP workers
  and the cluster at the start and the end, next to the recent window's size (messages per
  character, max and mean) then: a window that grew tells data growth from memory the workers kept.
  On stderr, the CPU each role used meanwhile (the server's processes, PostgreSQL, this process)
  and the machine's busy cores: whether a tail is waiting for a core or for something else. Then,
  once the backfill has caught up, ``--read-minutes`` of the same load without its writes (no new
  turns; extraction still runs once the characters fall quiet), RSS before and after.
- ``kill``: the load while, three times, a random HTTP worker and then the whole cluster get
  SIGKILL at random moments (a supervisor restarts the server when the cluster's death stops it);
  afterwards every acknowledged turn must be stored exactly once and every outbox op done.
- ``provider``: an OpenAI-compatible provider on loopback answers every call with HTTP 500 for
  ``--provider-down-minutes``, then answers each prompt kind validly (``bench/provider_script.py``:
  a summary, a review of the dialogue it was sent, a fact, a decision per pair, …), under the same
  load: the chat path's latency in both stretches (compare with ``mixed``), the jobs and outbox ops
  by status and reason at the end of each, whether the work finished afterwards with nobody
  stepping in, and the calls by prompt kind once it was back.
- ``outage``: on a PostgreSQL server and a Redis of the bench's own (other ports, so the machine's
  services are untouched), PostgreSQL is restarted and Redis stopped for a while during the load:
  requests must fail as JSON 503 (no HTML, no traceback), recover by themselves, lose no
  acknowledged turn.

    .venv/bin/python bench/load_faults.py                      # every phase, both backends
    .venv/bin/python bench/load_faults.py --phases mixed --backends sqlite --minutes 1
    .venv/bin/python bench/load_faults.py --phases provider --backends postgres
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import itertools
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.provider_script import HealthyProvider  # noqa: E402
from bench.shared_data import conversation, turns  # noqa: E402
from tests.support.server_process import (  # noqa: E402
    ProcessInfo,
    ServerProcess,
    history_body,
    http_call,
    redis_queue_cleanup,
    server_backend,
)

DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"
DEFAULT_REDIS = "redis://127.0.0.1:6379/0"
CLIENTS = 16
CHARACTERS = 8
ROUTE_WEIGHTS = (("cache", 2), ("query_memory", 1), ("new_dialog", 1))
SESSION_TURNS = 0  # --session-turns: 0 picks each route at random by ROUTE_WEIGHTS
LOCKSTEP = False  # --lockstep: every client paces at the same fixed interval from the same start
WRITE_ROUTES = frozenset({"cache", "settle"})
IN_RECALL = "query_memory, in recall"  # the ``elapsed_ms`` its answers report
# The outage phase's own services, on ports nothing else here uses.
OUTAGE_PG_PORT = 54329
OUTAGE_REDIS_PORT = 63799


def chat_lines() -> list[tuple[str, str]]:
    """(user, assistant) pairs of real conversation text, Chinese and English: more distinct lines
    (1134) than the query-vector memo holds (512), so most queries are embedded, as a chat's new
    message would be; memorybank alone (427 lines) let nearly every query after the warm-up hit it."""
    pairs: list[tuple[str, str]] = []
    for dataset in ("memorybank-cn", "memorybank-en", "locomo10"):
        for conv_id in sorted({row["conv_id"] for row in turns(dataset)}):
            rows = conversation(dataset, conv_id)
            for first, second in itertools.pairwise(rows):
                if first["role"] == "user" and second["role"] == "assistant":
                    pairs.append((first["text"], second["text"]))
    return pairs


@dataclass
class Tally:
    """What the clients saw; shared by the client threads under one lock."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    statuses: Counter[tuple[str, str]] = field(default_factory=Counter)
    acknowledged: list[str] = field(default_factory=list)  # markers of turns answered "cached"
    sent_markers: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Markers are unique across runs against one database (the warm-up is a run of its own).
    run_id: str = field(default_factory=lambda: f"{random.randrange(16**6):06x}")

    def record(self, route: str, outcome: str, ms: float | None) -> None:
        with self.lock:
            self.statuses[(route, outcome)] += 1
            if ms is not None and outcome == "ok":
                self.latencies[route].append(ms)


def _outcome(route: str, status: int, content_type: str, body: bytes) -> str:
    if status == 200:
        if route == "cache":
            try:
                return "ok" if json.loads(body).get("status") == "cached" else "error-200"
            except ValueError:
                return "bad-body"
        if route == "query_memory":
            # Recall never fails the chat: an internal failure is a 200 with no results and an error
            # code, and it counts as a failure here.
            try:
                code = json.loads(body).get("error_code")
            except ValueError:
                return "bad-body"
            return f"200-{code}" if code else "ok"
        return "ok"
    if "json" not in content_type:
        return f"{status}-not-json"
    return f"{status}-json"


class Client(threading.Thread):
    def __init__(
        self,
        index: int,
        port: int,
        tally: Tally,
        lines: list[tuple[str, str]],
        interval: float,
        stop_at: float,
        read_only: bool = False,
    ) -> None:
        super().__init__(daemon=True)
        self.index, self.port, self.tally, self.lines = index, port, tally, lines
        self.interval, self.stop_at = interval, stop_at
        self.rng = random.Random(index)
        self.conn: http.client.HTTPConnection | None = None
        self.turns = 0
        self.run_id = tally.run_id
        self.session: list[str] = []
        self.read_only = read_only  # recall and prompts only: the clients send no turn

    def _request(self, method: str, path: str, body: Any = None) -> tuple[int, str, bytes]:
        # Never resent: a turn whose answer was lost may be stored, and a resend would store it twice
        # by the client's doing. A failed request is counted, and the next one opens a new connection.
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            headers = {"Content-Type": "application/json"} if body is not None else {}
            payload = json.dumps(body, ensure_ascii=False).encode() if body is not None else None
            self.conn.request(method, quote(path), body=payload, headers=headers)
            response = self.conn.getresponse()
            return response.status, response.getheader("Content-Type", ""), response.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()
            self.conn = None
            raise

    def next_route(self, routes: list[str]) -> str:
        route = self._next_route(routes)
        while self.read_only and route in WRITE_ROUTES:
            route = self._next_route(routes)
        return route

    def _next_route(self, routes: list[str]) -> str:
        if SESSION_TURNS <= 0:
            return self.rng.choice(routes)
        # A chat: /new_dialog, then each turn recalled and cached, then /settle when the session ends.
        if not self.session:
            self.session = ["new_dialog"]
            for _ in range(SESSION_TURNS):
                self.session += ["query_memory", "cache"]
            self.session.append("settle")
        return self.session.pop(0)

    def think_time(self) -> float:
        """The pause from one request's start to the next one's. Every client's pause was the same fixed
        interval and they all started together, so the chats ran in lockstep: sixteen /query_memory
        arrived within milliseconds, then sixteen /cache, every 0.2 s (3 times the neighbours a random
        arrival has), and the tail measured a burst queueing for two interpreter locks. Independent
        users: a random start, then pauses drawn around the interval (the same offered rate)."""
        if LOCKSTEP:
            return self.interval
        return self.interval * self.rng.uniform(0.5, 1.5)

    def run(self) -> None:
        routes = [route for route, weight in ROUTE_WEIGHTS for _ in range(weight)]
        if not LOCKSTEP:
            time.sleep(min(self.rng.uniform(0.0, self.interval), max(0.0, self.stop_at - time.monotonic())))
        while time.monotonic() < self.stop_at:
            started = time.monotonic()
            route = self.next_route(routes)
            # Few characters: each client keeps to one. Many: each turn goes to a random one, so a
            # character gets a turn every few seconds to minutes, with quiet spells as in real chats.
            character = self.index % CHARACTERS if CHARACTERS <= CLIENTS else self.rng.randrange(CHARACTERS)
            name = f"load{character}"
            user, assistant = self.lines[(self.index * 7919 + self.turns) % len(self.lines)]
            marker = f"mk{self.run_id}x{self.index}x{self.turns}"
            try:
                if route == "cache":
                    self.turns += 1
                    messages = [
                        {"type": "human", "data": {"content": f"{user} {marker}"}},
                        {"type": "ai", "data": {"content": assistant}},
                    ]
                    with self.tally.lock:
                        self.tally.sent_markers.append(marker)
                    status, ctype, body = self._request(
                        "POST", f"/cache/{name}", history_body(messages, "zh")
                    )
                elif route == "query_memory":
                    status, ctype, body = self._request("POST", f"/query_memory/{name}", {"query": user[:60]})
                elif route == "settle":
                    status, ctype, body = self._request("POST", f"/settle/{name}", {})
                else:
                    status, ctype, body = self._request("GET", f"/new_dialog/{name}")
            except (OSError, http.client.HTTPException):
                self.tally.record(route, "no-connection", None)
                time.sleep(0.2)
                continue
            elapsed_ms = (time.monotonic() - started) * 1000
            outcome = _outcome(route, status, ctype, body)
            self.tally.record(route, outcome, elapsed_ms)
            if route == "query_memory" and outcome == "ok":
                # The server's own time inside recall: the rest of the latency is the way there and
                # back (middleware, the storage check, waiting for a thread, a core or the lock).
                self.tally.record(IN_RECALL, "ok", json.loads(body).get("elapsed_ms"))
            if route == "cache" and outcome == "ok":
                with self.tally.lock:
                    self.tally.acknowledged.append(marker)
            time.sleep(max(0.0, self.think_time() - (time.monotonic() - started)))


def run_load(
    port: int, seconds: float, rate: float, lines: list[tuple[str, str]], *, read_only: bool = False
) -> tuple[Tally, list[Client]]:
    tally = Tally()
    stop_at = time.monotonic() + seconds
    clients = [Client(i, port, tally, lines, CLIENTS / rate, stop_at, read_only) for i in range(CLIENTS)]
    for client in clients:
        client.start()
    return tally, clients


def long_lived(processes: dict[int, ProcessInfo]) -> dict[int, ProcessInfo]:
    """The server's own processes, without the short-lived forks of its HTTP workers (a recall snapshot
    is written by a fork of the worker that holds the index, for a fraction of a second). Linux gives a
    fork its parent's page tables, so a fork counted beside its parent doubles that worker's RSS."""

    def worker_fork(info: ProcessInfo) -> bool:
        # granian's master → a worker → its fork, all HTTP (the cluster's workers sit that deep too)
        parent = processes.get(info.ppid)
        grandparent = processes.get(parent.ppid) if parent is not None else None
        lineage = (info, parent, grandparent)
        return all(p is not None and _role(p.cmdline) == "http" for p in lineage)

    return {pid: info for pid, info in processes.items() if not worker_fork(info)}


def rss_mb(server: ServerProcess) -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for pid, info in long_lived(server.processes()).items():
        role = _role(info.cmdline)
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    totals[role] += int(line.split()[1]) / 1024
    return dict(totals)


class RssSampler(threading.Thread):
    """RSS by role every ``every`` seconds through a phase: the start, the end and the highest value.
    Two instants alone read a worker caught mid-build (an index rebuilt beside the one it replaces) as
    growth, or miss a peak that came and went."""

    def __init__(self, server: ServerProcess, every: float = 5.0) -> None:
        super().__init__(name="rss-sampler", daemon=True)
        self.server = server
        self.every = every
        self.samples: list[dict[str, float]] = [rss_mb(server)]
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.every):
            self.samples.append(rss_mb(self.server))

    def finish(self) -> dict[str, tuple[float, float, float]]:
        """role → (start, end, peak) in MB."""
        self._stop_event.set()
        self.join()
        self.samples.append(rss_mb(self.server))
        roles = set().union(*self.samples)
        return {
            role: (
                self.samples[0].get(role, 0.0),
                self.samples[-1].get(role, 0.0),
                max(sample.get(role, 0.0) for sample in self.samples),
            )
            for role in roles
        }

    def per_minute(self, role: str) -> str:
        """The role's RSS at the start of each minute and at the end: a growth that levels off, or not."""
        step = max(1, round(60 / self.every))
        picked = [*self.samples[::step], self.samples[-1]]
        return " ".join(f"{sample.get(role, 0.0):.0f}" for sample in picked)


def recall_index_events(server: ServerProcess, since: int) -> str:
    """What the workers' recall indexes did after byte ``since`` of the server log: full builds (and
    why), catch-ups by the change log, snapshot loads."""
    with server.log_path.open("rb") as log:
        log.seek(since)
        text = log.read().decode(errors="replace")
    kinds: Counter[str] = Counter()
    for line in text.splitlines():
        if "recall index built" in line:
            kinds["built (" + line.rsplit("why=", 1)[-1].split()[0] + ")"] += 1
        elif "recall index caught up" in line:
            kinds["caught up"] += 1
        elif "recall index loaded" in line:
            kinds["loaded"] += 1
    return ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items())) or "none"


def recall_index_mb(server: ServerProcess, tries: int = 60) -> float | None:
    """MB of recall-index arrays the HTTP workers hold, summed: each status answer reports its own
    worker's, so ask on fresh connections until every worker has answered (None if one never did)."""
    processes = server.processes()
    http = {pid for pid, info in long_lived(processes).items() if _role(info.cmdline) == "http"}
    workers = {pid for pid in http if processes[pid].ppid in http}  # granian's master answers nothing
    held: dict[int, int] = {}
    for _ in range(tries):
        with contextlib.suppress(OSError, ValueError, KeyError):
            process = http_call(server.port, "GET", "/api/v1/status/").json()["process"]
            held[process["pid"]] = next(
                c["bytes"] for c in process["caches"] if c["name"] == "recall_indexes"
            )
        if workers <= set(held):
            return sum(held[pid] for pid in workers) / 1e6
    return None


def _role(cmdline: str) -> str:
    return "cluster" if "qcluster" in cmdline else "http" if "granian" in cmdline else "serve"


SERVICE_ROLES = {"postgres": "postgresql", "redis-server": "redis"}  # process name → role


def cpu_seconds(server: ServerProcess) -> dict[str, float]:
    """CPU time used so far (user + system) by the server's roles, every PostgreSQL process on the
    machine, and this process (the clients and the loopback provider): where the two cores go."""
    tick = os.sysconf("SC_CLK_TCK")
    totals: dict[str, float] = defaultdict(float)

    def used(pid: int | str) -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / tick  # utime, stime

    for pid, info in server.processes().items():
        with contextlib.suppress(OSError, IndexError, ValueError):
            totals[_role(info.cmdline)] += used(pid)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            role = SERVICE_ROLES.get((entry / "comm").read_text().strip())
            if role is not None:
                totals[role] += used(entry.name)
    own = os.times()
    totals["load generator + provider"] = own.user + own.system
    return dict(totals)


def machine_busy_seconds() -> float:
    """CPU time the whole machine spent busy (every core): counts processes that exited meanwhile
    too, such as PostgreSQL backends of connections the server recycled."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def quantile(values: list[float], q: int) -> str:
    if len(values) < 2:
        return "-"
    return f"{statistics.quantiles(sorted(values), n=100, method='inclusive')[q - 1]:.1f}"


def route_rows(backend: str, phase: str, tally: Tally) -> list[list[str]]:
    rows = []
    for route in [*(r for r, _ in ROUTE_WEIGHTS), IN_RECALL, "settle"]:
        outcomes = {outcome: n for (r, outcome), n in tally.statuses.items() if r == route}
        if not outcomes:
            continue
        failures = {outcome: n for outcome, n in outcomes.items() if outcome != "ok"}
        lat = tally.latencies[route]
        rows.append(
            [
                backend,
                phase,
                route,
                str(sum(outcomes.values())),
                quantile(lat, 50),
                quantile(lat, 95),
                quantile(lat, 99),
                ", ".join(f"{k} {v}" for k, v in sorted(failures.items())) or "0",
            ]
        )
    return rows


def stored_marker_counts(server: ServerProcess) -> Counter[str]:
    assert server.database is not None
    rows = server.database.query(
        "SELECT r.message FROM recent_rawmessage r JOIN characters_character c ON c.id = r.character_id "
        "WHERE c.name LIKE %s",
        ["load%"],
    )
    counts: Counter[str] = Counter()
    for (message,) in rows:
        parsed = json.loads(message)
        if parsed.get("type") != "human":
            continue
        marker = str(parsed.get("data", {}).get("content", "")).rsplit(" ", 1)[-1]
        if marker.startswith("mk"):
            counts[marker] += 1
    return counts


def outbox_counts(server: ServerProcess) -> dict[str, int]:
    assert server.database is not None
    return {
        str(status): int(n)
        for status, n in server.database.query(
            "SELECT status, COUNT(*) FROM journal_outboxop GROUP BY status"
        )
    }


def job_counts(server: ServerProcess) -> dict[str, int]:
    assert server.database is not None
    return {
        str(status): int(n)
        for status, n in server.database.query("SELECT status, COUNT(*) FROM journal_job GROUP BY status")
    }


def wait_outbox_done(server: ServerProcess, timeout: float = 300.0) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while True:
        counts = outbox_counts(server)
        if (not counts.get("pending") and not counts.get("running")) or time.monotonic() > deadline:
            return counts
        time.sleep(0.5)


def integrity_row(backend: str, phase: str, tally: Tally, server: ServerProcess) -> list[str]:
    counts = stored_marker_counts(server)
    acknowledged = set(tally.acknowledged)
    lost = sum(1 for marker in acknowledged if counts[marker] == 0)
    duplicated = sum(1 for n in counts.values() if n > 1)
    ops = wait_outbox_done(server)
    return [
        backend,
        phase,
        str(len(acknowledged)),
        str(sum(1 for m in set(tally.sent_markers) - acknowledged if counts[m])),
        str(lost),
        str(duplicated),
        ", ".join(f"{k} {v}" for k, v in sorted(ops.items())),
    ]


def wait_vectors_filled(server: ServerProcess, timeout: float = 300.0) -> int | None:
    """Wait until the status report counts no row waiting for a vector; what still waits (None: unknown)."""
    deadline = time.monotonic() + timeout
    waiting: int | None = None
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError, KeyError):
            waiting = http_call(server.port, "GET", "/api/v1/status/").json()["embeddings"]["without_vectors"]
        if waiting == 0:
            return 0
        time.sleep(2)
    return waiting


def uncovered_characters(server: ServerProcess) -> int:
    """Load characters whose raw log has turns that fact extraction has not covered yet."""
    assert server.database is not None
    rows = server.database.query(
        "SELECT COUNT(*) FROM characters_character c "
        "LEFT JOIN facts_extractioncursor x ON x.character_id = c.id "
        "WHERE c.name LIKE %s AND EXISTS (SELECT 1 FROM recent_rawmessage r WHERE r.character_id = c.id "
        "AND (x.last_a_message_at IS NULL OR r.timestamp > x.last_a_message_at))",
        ["load%"],
    )
    return int(rows[0][0])


def memory_versions(server: ServerProcess) -> int:
    assert server.database is not None
    return int(
        server.database.query("SELECT COALESCE(SUM(memory_version), 0) FROM characters_character")[0][0]
    )


def wait_memory_quiet(server: ServerProcess, *, still: float = 90.0, timeout: float = 900.0) -> str:
    """Wait until extraction has covered every turn, no job or outbox op is due or running, and no
    character's memory changed for ``still`` seconds: from then on an index changes only if a read
    changes it. Returns how long that took, or what still moved at the timeout."""
    started = time.monotonic()
    deadline = started + timeout
    version, since = memory_versions(server), time.monotonic()
    while True:
        now = time.monotonic()
        current = memory_versions(server)
        if current != version:
            version, since = current, now
        busy = {
            name: counts.get("pending", 0) + counts.get("running", 0)
            for name, counts in (("outbox", outbox_counts(server)), ("jobs", job_counts(server)))
        }
        uncovered = uncovered_characters(server)
        if not uncovered and not any(busy.values()) and now - since >= still:
            return f"quiet after {now - started:.0f} s"
        if now > deadline:
            return f"not quiet after {timeout:.0f} s: {uncovered} uncovered, {busy}"
        time.sleep(2)


def window_sizes(server: ServerProcess) -> str:
    """Recent-window messages per load character, ``max / mean``: what every ``/new_dialog`` renders."""
    assert server.database is not None
    counts = [
        int(n)
        for (n,) in server.database.query(
            "SELECT COUNT(*) FROM recent_recentmessage m JOIN characters_character c "
            "ON c.id = m.character_id WHERE c.name LIKE %s GROUP BY m.character_id",
            ["load%"],
        )
    ]
    return f"{max(counts)} / {statistics.fmean(counts):.1f}" if counts else "-"


@contextlib.contextmanager
def loopback_provider(server: ServerProcess, fallback) -> Iterator[Any]:
    """An OpenAI-compatible provider on loopback answering every call by ``fallback``, configured as
    the server's summary tier (before it starts)."""
    from tests.support.llm_server import ScriptedLLMServer

    provider = ScriptedLLMServer()
    provider.allow_unexpected = True
    provider.fallback = fallback
    provider.start()
    try:
        server.extra_env.update(
            NEKOMEM_LLM_SUMMARY_BASE_URL=provider.base_url,
            NEKOMEM_LLM_SUMMARY_API_KEY="sk-bench",
            NEKOMEM_LLM_SUMMARY_MODEL="bench-model",
        )
        yield provider
    finally:
        provider.stop()


def phase_mixed(backend: str, server: ServerProcess, args: argparse.Namespace, lines) -> tuple[list, list]:
    if not args.mixed_provider:
        return _phase_mixed(backend, server, args, lines)
    answers = HealthyProvider()
    with loopback_provider(server, answers.answer):
        rows, rss = _phase_mixed(backend, server, args, lines)
    print(f"mixed {backend}: provider calls {answers.counts()}", file=sys.stderr)
    return rows, rss


def _phase_mixed(backend: str, server: ServerProcess, args: argparse.Namespace, lines) -> tuple[list, list]:
    server.start()
    _warm, warm_clients = run_load(server.port, 15, args.rate, lines)
    for client in warm_clients:
        client.join()
    window_start, index_start = window_sizes(server), recall_index_mb(server)
    sampler = RssSampler(server)
    sampler.start()
    cpu_start, busy_start, wall_start = cpu_seconds(server), machine_busy_seconds(), time.monotonic()
    tally, clients = run_load(server.port, args.minutes * 60, args.rate, lines)
    for client in clients:
        client.join()
    cpu_end, busy_end, wall = cpu_seconds(server), machine_busy_seconds(), time.monotonic() - wall_start
    memory = sampler.finish()
    window_end, index_end = window_sizes(server), recall_index_mb(server)
    rss = [[backend, role, *(f"{mb:.0f}" for mb in memory[role])] for role in sorted(memory)]
    busy = {role: cpu_end[role] - cpu_start.get(role, 0.0) for role in cpu_end}
    for role in sorted(busy, key=busy.__getitem__, reverse=True):
        print(f"mixed {backend}: cpu {role} {busy[role] / wall:.2f} cores", file=sys.stderr)
    print(
        f"mixed {backend}: cpu machine {(busy_end - busy_start) / wall:.2f} of {os.cpu_count()} cores"
        f" (the processes above: {sum(busy.values()) / wall:.2f})",
        file=sys.stderr,
    )
    rss.append([backend, "recent window, messages per character (max / mean)", window_start, window_end, ""])
    index_row = [backend, "recall index arrays in the HTTP workers (MB)", _mb(index_start), _mb(index_end)]
    rss.append([*index_row, ""])
    integrity = integrity_row(backend, "mixed", tally, server)
    rows = [*route_rows(backend, "mixed", tally), ["integrity", *integrity]]
    if args.read_minutes > 0:
        # The same clients with nothing to write, once the backfill has caught up (its vectors fill rows
        # the indexes already hold, and that is data too) and extraction, reflection and the outbox have
        # gone quiet: what the workers gain now is memory kept per request, not data.
        backlog = wait_vectors_filled(server)
        quiet = wait_memory_quiet(server)
        print(f"mixed {backend}: before the reads, {quiet}", file=sys.stderr)
        read_index_start = recall_index_mb(server)
        log_at = server.log_path.stat().st_size
        sampler = RssSampler(server)
        sampler.start()
        reads, clients = run_load(server.port, args.read_minutes * 60, args.rate, lines, read_only=True)
        for client in clients:
            client.join()
        read_memory = sampler.finish()
        print(
            f"mixed {backend}: reads only, http RSS each minute: {sampler.per_minute('http')}",
            file=sys.stderr,
        )
        events = recall_index_events(server, log_at)
        print(f"mixed {backend}: reads only, recall indexes: {events}", file=sys.stderr)
        read_index_end = recall_index_mb(server)
        rss += [
            [
                backend,
                f"{role} (then reads only, {args.read_minutes:g} min; vectors waiting {backlog}; {quiet})",
                *(f"{mb:.0f}" for mb in read_memory[role]),
            ]
            for role in sorted(read_memory)
            if role != "serve"
        ]
        rss.append(
            [
                backend,
                f"recall index arrays in the HTTP workers (MB; then reads only, {args.read_minutes:g} min)",
                _mb(read_index_start),
                _mb(read_index_end),
                "",
            ]
        )
        rows += route_rows(backend, "reads only", reads)
    return rows, rss


def _kill_tree_of(server: ServerProcess, needle: str, *, one: bool) -> int:
    victims = [pid for pid, info in server.processes().items() if needle in info.cmdline]
    if one and victims:
        victims = [random.choice(victims[1:] or victims)]  # a worker, not granian's master
    for pid in victims:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return len(victims)


def phase_kill(backend: str, server: ServerProcess, args: argparse.Namespace, lines) -> list:
    server.start()
    seconds = args.kill_seconds
    tally, clients = run_load(server.port, seconds, args.rate, lines)
    began = time.monotonic()
    rng = random.Random(14)
    moments = sorted(rng.uniform(0.1, 0.85) * seconds for _ in range(6))
    restarts = 0
    for index, at in enumerate(moments):
        time.sleep(max(0.0, at - (time.monotonic() - began)))
        if index % 2 == 0:
            _kill_tree_of(server, "granian", one=True)
        else:
            _kill_tree_of(server, "qcluster", one=False)
            # serve stops when its cluster dies; a supervisor (systemd, or here the bench) restarts it.
            assert server.process is not None
            with contextlib.suppress(subprocess.TimeoutExpired):
                server.process.wait(timeout=30)
            server.stop()
            server.start()
            restarts += 1
    for client in clients:
        client.join()
    row = integrity_row(backend, f"kill x3 ({restarts} restarts)", tally, server)
    return [*route_rows(backend, "kill", tally), ["integrity", *row]]


@contextlib.contextmanager
def own_services(tmp: Path):
    """A PostgreSQL cluster and a Redis of the bench's own, so restarting them disturbs nobody."""
    pg_bin = Path(sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1])
    data = tmp / "pg"
    user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    data.mkdir()
    shutil.chown(data, "postgres") if user else None
    subprocess.run(
        [*user, str(pg_bin / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"],
        check=True,
        capture_output=True,
    )
    pg_log = tmp / "pg.log"
    if user:
        pg_log.touch()
        shutil.chown(pg_log, "postgres")
    pg_ctl = [*user, str(pg_bin / "pg_ctl"), "-D", str(data), "-l", str(pg_log), "-w"]
    options = ["-o", f"-p {OUTAGE_PG_PORT} -k {tmp} -c listen_addresses=127.0.0.1"]
    subprocess.run([*pg_ctl, *options, "start"], check=True, capture_output=True)
    redis = [
        "redis-server",
        "--port",
        str(OUTAGE_REDIS_PORT),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "yes",
        "--dir",
        str(tmp),
    ]
    subprocess.run(redis, check=True, capture_output=True)
    try:
        yield (
            lambda: subprocess.run(
                [*pg_ctl, *options, "-m", "fast", "restart"], check=True, capture_output=True
            ),
            lambda: subprocess.run(
                ["redis-cli", "-p", str(OUTAGE_REDIS_PORT), "shutdown", "nosave"], capture_output=True
            ),
            lambda: subprocess.run(redis, check=True, capture_output=True),
        )
    finally:
        subprocess.run(["redis-cli", "-p", str(OUTAGE_REDIS_PORT), "shutdown", "nosave"], capture_output=True)
        subprocess.run([*pg_ctl, "-m", "immediate", "stop"], capture_output=True)
    if user:
        tmp.chmod(0o777)
        data.chmod(0o777)


def phase_outage(args: argparse.Namespace, lines) -> list:
    with tempfile.TemporaryDirectory(prefix="nekomem-outage-") as tmp_name:
        tmp = Path(tmp_name)
        tmp.chmod(0o777)
        with (
            own_services(tmp) as (pg_restart, redis_stop, redis_start),
            server_backend(
                tmp,
                postgres_url=f"postgres://postgres@127.0.0.1:{OUTAGE_PG_PORT}/postgres",
                redis_base_url=f"redis://127.0.0.1:{OUTAGE_REDIS_PORT}/0",
            ) as server,
        ):
            server.start()
            seconds = args.outage_seconds
            tally, clients = run_load(server.port, seconds, args.rate, lines)
            time.sleep(seconds * 0.25)
            pg_restart()
            print(f"PostgreSQL restarted at {time.strftime('%H:%M:%S')}", file=sys.stderr)
            time.sleep(seconds * 0.15)
            redis_stop()
            print(f"Redis stopped at {time.strftime('%H:%M:%S')}", file=sys.stderr)
            time.sleep(args.redis_down_seconds)
            redis_start()
            print(f"Redis started at {time.strftime('%H:%M:%S')}", file=sys.stderr)
            for client in clients:
                client.join()
            row = integrity_row("postgres", "outage", tally, server)
            warnings = [
                line
                for line in server.log_tail(100000).splitlines()
                if "unavailable" in line or "rror" in line
            ]
            print(f"{len(warnings)} outage lines in the server log, e.g. {warnings[:2]}", file=sys.stderr)
            rows = [*route_rows("postgres", "pg restart + redis down", tally), ["integrity", *row]]
            redis_queue_cleanup(server.redis_url or "", server.q_name)
            return rows


def work_summary(server: ServerProcess) -> tuple[str, str]:
    """Jobs by kind, status and waiting reason; outbox ops by status and reason."""
    assert server.database is not None
    jobs = server.database.query(
        "SELECT kind, status, waiting_reason, COUNT(*) FROM journal_job GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"
    )
    ops = server.database.query(
        "SELECT status, waiting_reason, COUNT(*) FROM journal_outboxop GROUP BY 1, 2 ORDER BY 1, 2"
    )

    def show(rows: list[tuple[Any, ...]]) -> str:
        return (
            "; ".join(" ".join(str(part) for part in row[:-1] if part) + f" {row[-1]}" for row in rows) or "-"
        )

    return show(jobs), show(ops)


def phase_provider(backend: str, server: ServerProcess, args: argparse.Namespace, lines) -> list:
    from tests.support.llm_server import error

    healthy = threading.Event()
    # Healthy, it answers each prompt kind in the shape its layer accepts (a summary, a review, facts,
    # decisions), so compression, review and the rest succeed instead of failing on to dead letters.
    answers = HealthyProvider()
    with loopback_provider(
        server, lambda body: answers.answer(body) if healthy.is_set() else error(500, message="down")
    ) as provider:
        server.start()
        down_minutes, up_minutes = args.provider_down_minutes, args.provider_up_minutes
        tally_down, clients = run_load(server.port, down_minutes * 60, args.rate, lines)
        for client in clients:
            client.join()
        calls_down = len(provider.requests)
        jobs_down, ops_down = work_summary(server)
        healthy.set()
        tally_up, clients = run_load(server.port, up_minutes * 60, args.rate, lines)
        for client in clients:
            client.join()
        integrity = integrity_row(backend, "provider", tally_down, server)
        deadline = time.monotonic() + args.settle_seconds
        while time.monotonic() < deadline:
            jobs_up, ops_up = work_summary(server)
            if "waiting" not in jobs_up and "pending" not in ops_up and "waiting" not in ops_up:
                break
            time.sleep(5)
        print(
            f"provider {backend}: {calls_down} calls failed in {down_minutes:g} min; "
            f"{len(provider.requests) - calls_down} calls after it came back ({answers.counts()})",
            file=sys.stderr,
        )
        return [
            *route_rows(backend, f"provider down {down_minutes:g} min", tally_down),
            *route_rows(backend, f"provider back {up_minutes:g} min", tally_up),
            ["integrity", *integrity],
            ["work", backend, f"end of the {down_minutes:g} min outage", jobs_down, ops_down],
            ["work", backend, "after it came back", jobs_up, ops_up],
        ]


def print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(f"\n{title}")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)) + " |")


def main() -> None:
    global CHARACTERS, SESSION_TURNS, LOCKSTEP
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--phases", default="mixed,kill,provider,outage")
    parser.add_argument("--keep-logs", type=Path, help="copy each phase's server log into this directory")
    parser.add_argument("--backends", default="postgres,sqlite")
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--rate", type=float, default=80.0, help="requests per second offered in all")
    parser.add_argument("--kill-seconds", type=float, default=90.0)
    parser.add_argument("--outage-seconds", type=float, default=60.0)
    parser.add_argument("--redis-down-seconds", type=float, default=10.0)
    parser.add_argument("--provider-down-minutes", type=float, default=10.0)
    parser.add_argument("--provider-up-minutes", type=float, default=3.0)
    parser.add_argument(
        "--settle-seconds",
        type=float,
        default=300.0,
        help="how long the provider phase waits, after its load, for the jobs and ops left to finish",
    )
    parser.add_argument(
        "--characters",
        type=int,
        default=CHARACTERS,
        help="characters the load is spread over (the provider phase needs many: extraction waits for "
        "10 s of quiet in a character)",
    )
    parser.add_argument(
        "--session-turns",
        type=int,
        default=0,
        help="clients play chat sessions of this many turns (/new_dialog, then /query_memory + /cache per"
        " turn, then /settle) instead of picking routes at random 2:1:1",
    )
    parser.add_argument(
        "--read-minutes",
        type=float,
        default=2.0,
        help="after the mixed load, this long the same clients only read (/query_memory, /new_dialog): "
        "the workers' RSS then tells memory kept per request from data indexed",
    )
    parser.add_argument(
        "--mixed-provider",
        action="store_true",
        help="the mixed phase with a healthy provider on loopback (compression, extraction and review run)",
    )
    parser.add_argument(
        "--lockstep",
        action="store_true",
        help="the clients' pacing before session 13: one fixed interval for all, started together (their"
        " requests arrive in bursts of one route)",
    )
    parser.add_argument("--postgres", default=os.environ.get("DATABASE_URL") or DEFAULT_POSTGRES)
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL") or DEFAULT_REDIS)
    args = parser.parse_args()
    CHARACTERS = args.characters
    SESSION_TURNS = args.session_turns
    LOCKSTEP = args.lockstep
    phases = args.phases.split(",")
    lines = chat_lines()
    latency_rows: list[list[str]] = []
    integrity_rows: list[list[str]] = []
    rss_rows: list[list[str]] = []
    work_rows: list[list[str]] = []

    def split(rows: list[list[str]]) -> None:
        for row in rows:
            if row[0] == "work":
                work_rows.append(row[1:])
            elif row[0] == "integrity":
                integrity_rows.append(row[1:])
            else:
                latency_rows.append(row)

    for backend in args.backends.split(","):
        postgres = args.postgres if backend == "postgres" else None
        redis = args.redis if backend == "postgres" else None
        for phase in ("mixed", "kill", "provider"):
            if phase not in phases:
                continue
            with (
                tempfile.TemporaryDirectory(prefix=f"nekomem-{phase}-") as tmp,
                server_backend(Path(tmp), postgres_url=postgres, redis_base_url=redis) as server,
            ):
                if phase == "mixed":
                    rows, rss = phase_mixed(backend, server, args, lines)
                    rss_rows += rss
                elif phase == "kill":
                    rows = phase_kill(backend, server, args, lines)
                else:
                    rows = phase_provider(backend, server, args, lines)
                split(rows)
                if args.keep_logs:
                    args.keep_logs.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(server.log_path, args.keep_logs / f"{phase}-{backend}.log")
    if "outage" in phases:
        split(phase_outage(args, lines))

    shape = (
        f"sessions of {SESSION_TURNS} turns: new_dialog, query_memory + cache per turn, settle"
        if SESSION_TURNS
        else "cache : query_memory : new_dialog = 2:1:1"
    )
    provider = ", healthy provider" if args.mixed_provider else ", no provider"
    print(f"\n{CLIENTS} clients offering {args.rate:.0f} requests/s over {CHARACTERS} characters")
    pacing = "lockstep pacing" if LOCKSTEP else "independent clients: random start, think time 0.5-1.5x"
    print(f"({shape}{provider}; {pacing})")
    print_table(
        "Latency and errors per route (ms)",
        ["backend", "phase", "route", "requests", "p50", "p95", "p99", "failures"],
        latency_rows,
    )
    print_table(
        "Acknowledged turns afterwards",
        [
            "backend",
            "phase",
            "acknowledged",
            "unacknowledged but stored",
            "lost",
            "stored twice",
            "outbox ops",
        ],
        integrity_rows,
    )
    if work_rows:
        print_table(
            "Background work while the LLM provider failed and after (jobs by kind, status, reason)",
            ["backend", "when", "jobs", "outbox ops"],
            work_rows,
        )
    if rss_rows:
        print_table(
            "Resident memory (MB; the server's own processes, sampled every 5 s) and recent-window size,"
            " start and end of the mixed load",
            ["backend", "processes", "start", "end", "peak"],
            rss_rows,
        )


if __name__ == "__main__":
    main()
