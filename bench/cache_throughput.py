"""``/cache`` throughput and latency over HTTP against the real server, on SQLite and PostgreSQL.

The server is started exactly as ``make run`` starts it (``prepare``, then ``serve``) on a fresh
database: a SQLite file with the ORM broker, then a fresh PostgreSQL database with the Redis broker.
After a warm-up, N concurrent clients (threads, one keep-alive connection each) send two-message turns
taken from the shared conversations (memorybank-cn and locomo10). Two phases per backend:

- throughput: closed loop, each client sends its next turn as soon as the last is answered, until
  the fixed count is reached. Its latencies are those of a saturated server: with N clients always
  waiting, mean latency is N / throughput, whatever the server does.
- latency at a fixed load: open loop, the clients together send the target rate (300 turns/s on
  PostgreSQL, 150 on SQLite), each turn at its scheduled time; a turn's latency runs from its
  scheduled time, so time spent queued behind a slow answer counts.

After each phase the bench waits until every turn's outbox op is done (the cluster keeps up) and
reports how long that took. Prints one table row per backend and phase.

    .venv/bin/python bench/cache_throughput.py                     # both backends, 2000 turns each
    .venv/bin/python bench/cache_throughput.py --backends sqlite --turns 500 --env NEKOMEM_WORKERS=3
"""

from __future__ import annotations

import argparse
import collections
import heapq
import itertools
import json
import os
import selectors
import socket
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.shared_data import conversation, turns  # noqa: E402
from tests.support.dataset import as_messages  # noqa: E402
from tests.support.server_process import (  # noqa: E402
    ServerProcess,
    history_body,
    process_tree,
    running_processes,
    server_backend,
)

DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"
# The targets, used as the open-loop offered load.
TARGET_RATE = {"postgres": 300.0, "sqlite": 150.0}
DEFAULT_REDIS = "redis://127.0.0.1:6379/0"  # only its host is used: runs go to the dedicated e2e db


def turn_bodies(limit: int) -> list[dict[str, Any]]:
    """Two-message (user, assistant) turns from the shared conversations, as /cache bodies."""
    bodies: list[dict[str, Any]] = []
    for dataset, language in (("memorybank-cn", "zh"), ("locomo10", "en")):
        conv_ids = sorted({row["conv_id"] for row in turns(dataset)})
        for conv_id in conv_ids:
            rows = conversation(dataset, conv_id)
            for first, second in itertools.pairwise(rows):
                if first["role"] == "user" and second["role"] == "assistant":
                    bodies.append(history_body(as_messages([first, second]), language))
    if not bodies:
        raise SystemExit("no turns found in the shared data")
    return list(itertools.islice(itertools.cycle(bodies), limit))


@dataclass
class Result:
    backend: str
    phase: str  # "throughput" (closed loop) or "at N/s" (open loop)
    turns: int
    wall: float
    latencies_ms: list[float]
    errors: int
    stored_messages: int
    cpu: dict[str, float]
    ops_pending: int
    ops_drain_s: float

    def cpu_ms_per_turn(self) -> dict[str, float]:
        return {role: seconds * 1000 / self.turns for role, seconds in self.cpu.items() if seconds > 0}

    def row(self) -> list[str]:
        lat = sorted(self.latencies_ms)
        q = statistics.quantiles(lat, n=100, method="inclusive")
        return [
            self.backend,
            self.phase,
            str(self.turns),
            f"{self.wall:.2f}",
            f"{self.turns / self.wall:.0f}",
            f"{q[49]:.1f}",
            f"{q[94]:.1f}",
            f"{q[98]:.1f}",
            str(self.errors),
            f"{self.ops_drain_s:.1f}" if not self.ops_pending else f"{self.ops_pending} left",
        ]


def request_bytes(port: int, path: str, body: dict[str, Any]) -> bytes:
    """A whole keep-alive HTTP/1.1 POST, serialised once before the clock starts."""
    payload = json.dumps(body, ensure_ascii=False).encode()
    head = (
        f"POST {quote(path)} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: keep-alive\r\n\r\n"
    )
    return head.encode() + payload


class Connection:
    """One keep-alive connection driven by the event loop: send a request, read one response."""

    def __init__(self, port: int, requests: list[bytes]) -> None:
        self.port = port
        self.requests = requests
        self.next = 0
        self.sock = self._open()
        self.incoming = b""
        self.started = 0.0  # when the request in flight was due (open loop) or sent (closed loop)
        self.latencies: list[float] = []
        self.errors = 0

    def _open(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock  # blocking: a request goes out whole; reads happen only once the selector says so

    def begin(self, started: float) -> None:
        self.started = started
        self.incoming = b""
        self.sock.sendall(self.requests[self.next])
        self.next += 1

    def read(self) -> bool:
        """Read what is there; True once a whole response has arrived (its latency recorded)."""
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.incoming += chunk
        end = self.incoming.find(b"\r\n\r\n")
        if end < 0:
            return False
        head = self.incoming[:end].decode("latin-1").split("\r\n")
        length = next(
            (int(line.split(":", 1)[1]) for line in head[1:] if line.lower().startswith("content-length:")), 0
        )
        if len(self.incoming) < end + 4 + length:
            return False
        self.latencies.append((time.perf_counter() - self.started) * 1000)
        self.errors += head[0].split(" ", 2)[1] != "200"
        return True

    @property
    def done(self) -> bool:
        return self.next >= len(self.requests)


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_by_role(server_pid: int) -> dict[str, float]:
    """CPU seconds so far of the server's processes (by role), the database and this client.

    Read from /proc, so the split shows where a turn's CPU goes on this machine: the processes under
    `serve` (the granian HTTP workers, the django-q2 cluster), PostgreSQL / Redis processes and the
    client itself.
    """
    totals: dict[str, float] = collections.defaultdict(float)
    processes = running_processes()
    server = process_tree(server_pid, processes)
    for pid, info in processes.items():
        if pid == os.getpid():
            totals["client"] += info.cpu_seconds
        elif pid in server:
            cmdline = info.cmdline
            role = "cluster" if "qcluster" in cmdline else "http" if "granian" in cmdline else "serve"
            totals[role] += info.cpu_seconds
        elif info.cmdline.startswith("postgres"):
            totals["postgres"] += info.cpu_seconds
        elif "redis-server" in info.cmdline:
            totals["redis"] += info.cpu_seconds
    # Interrupt time (mostly the loopback TCP of our own round trips) belongs to no process; what
    # remains of the machine's busy time is someone else's load, which makes a run incomparable.
    ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    totals["irq"] = (ticks[5] + ticks[6]) / _CLOCK_TICKS
    busy = (sum(ticks[:8]) - ticks[3] - ticks[4]) / _CLOCK_TICKS
    totals["other"] = busy - sum(totals.values())
    return totals


def run_clients(
    port: int,
    bodies: list[dict[str, Any]],
    clients: int,
    characters: int,
    prefix: str,
    rate: float | None = None,
) -> tuple[float, list[float], int]:
    """Send every body once over ``clients`` connections; closed loop, or open loop at ``rate``/s.

    One thread drives every connection through a selector, so the client spends little CPU (it shares
    the machine with the server) and no client thread waits on another for the GIL. Closed loop: a
    connection sends its next turn as soon as its answer arrives. Open loop: turn k of all clients
    together is due at k / rate; one still waiting for its connection is sent late and its latency
    counts from the due time, so a backlog shows up as latency.
    """
    connections = [
        Connection(
            port,
            [
                request_bytes(port, f"/cache/{prefix}{index % characters}", body)
                for body in bodies[index::clients]
            ],
        )
        for index in range(clients)
    ]
    selector = selectors.DefaultSelector()
    for conn in connections:
        selector.register(conn.sock, selectors.EVENT_READ, conn)
    began = time.perf_counter()
    # (due time, connection index): every connection's next request
    due: list[tuple[float, int]] = []
    for index, conn in enumerate(connections):
        if conn.requests:
            due.append((began + index / rate if rate else began, index))
    heapq.heapify(due)
    busy = 0
    while due or busy:
        now = time.perf_counter()
        while due and due[0][0] <= now:
            when, index = heapq.heappop(due)
            connections[index].begin(when if rate else now)
            busy += 1
        timeout = max(0.0, due[0][0] - time.perf_counter()) if due else None
        if not busy:
            time.sleep(timeout or 0)
            continue
        for key, _events in selector.select(timeout):
            conn = key.data
            if not conn.read():
                continue
            busy -= 1
            if not conn.done:
                index = connections.index(conn)
                next_due = began + (conn.next * clients + index) / rate if rate else time.perf_counter()
                heapq.heappush(due, (next_due, index))
    wall = time.perf_counter() - began
    for conn in connections:
        selector.unregister(conn.sock)
        conn.sock.close()
    return (
        wall,
        [ms for conn in connections for ms in conn.latencies],
        sum(conn.errors for conn in connections),
    )


def _ops_drain(server: ServerProcess, timeout: float = 120.0) -> tuple[int, float]:
    """Wait until no outbox op is pending or running; returns (ops not done yet, seconds waited)."""
    assert server.database is not None
    began = time.perf_counter()
    while True:
        pending = int(
            server.database.query(
                "SELECT COUNT(*) FROM journal_outboxop WHERE status IN (%s, %s)", ["pending", "running"]
            )[0][0]
        )
        waited = time.perf_counter() - began
        if pending == 0 or waited > timeout:
            return pending, waited
        time.sleep(0.1)


def _measure(
    backend: str,
    phase: str,
    server: ServerProcess,
    args: argparse.Namespace,
    bodies: list[dict[str, Any]],
    prefix: str,
    rate: float | None,
) -> Result:
    assert server.process is not None and server.database is not None
    # The phase's characters exist before the clock starts: a first turn creates its character, and
    # a chat server's characters are long-lived, so that is not what the phase measures.
    first_turns = bodies[: args.characters]
    run_clients(server.port, first_turns, args.characters, args.characters, prefix)
    _ops_drain(server)
    cpu_before = _cpu_by_role(server.process.pid)
    wall, latencies, errors = run_clients(
        server.port, bodies[: args.turns], args.clients, args.characters, prefix, rate
    )
    cpu_after = _cpu_by_role(server.process.pid)
    cpu = {role: cpu_after[role] - cpu_before.get(role, 0.0) for role in cpu_after}
    pending, drain = _ops_drain(server)
    stored = server.database.query(
        "SELECT COUNT(*) FROM recent_rawmessage r JOIN characters_character c ON c.id = r.character_id "
        "WHERE c.name LIKE %s",
        [f"{prefix}%"],
    )[0][0]
    stored -= 2 * len(first_turns)
    return Result(backend, phase, args.turns, wall, latencies, errors, int(stored), cpu, pending, drain)


def bench_backend(
    backend: str, server: ServerProcess, args: argparse.Namespace, bodies: list[dict[str, Any]]
) -> list[Result]:
    server.extra_env.update(dict(item.split("=", 1) for item in args.env))
    server.start()
    run_clients(server.port, bodies[: args.warmup], args.clients, args.characters, "warm")
    _ops_drain(server)
    results = [_measure(backend, "throughput", server, args, bodies, "bench", None)]
    rate = args.rate or TARGET_RATE[backend]
    if rate > 0:
        results.append(_measure(backend, f"at {rate:.0f}/s", server, args, bodies, "paced", rate))
    return results


def print_table(results: list[Result], args: argparse.Namespace) -> None:
    header = [
        "backend",
        "phase",
        "turns",
        "wall s",
        "turns/s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "errors",
        "ops drain s",
    ]
    rows = [header, *(r.row() for r in results)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    print(
        f"\n/cache, {args.clients} clients, {args.characters} character(s), "
        f"{os.cpu_count()} CPUs, extra env: {' '.join(args.env) or '-'}"
    )
    for i, row in enumerate(rows):
        print("| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |")
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in results:
        split = ", ".join(f"{role} {ms:.2f}" for role, ms in sorted(r.cpu_ms_per_turn().items()))
        print(f"CPU ms per turn ({r.backend}, {r.phase}, whole machine): {split}")
    for r in results:
        if r.stored_messages != 2 * r.turns:
            print(f"WARNING {r.backend}: {r.stored_messages} raw rows stored for {r.turns} turns")
        if r.ops_pending:
            print(f"WARNING {r.backend} {r.phase}: {r.ops_pending} outbox ops still pending")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument(
        "--rate", type=float, default=0.0, help="open-loop turns/s (default: the backend's target; <0 skips)"
    )
    parser.add_argument("--characters", type=int, default=8, help="characters the clients spread over")
    parser.add_argument("--postgres-url", default=os.environ.get("NEKOMEM_BENCH_POSTGRES", DEFAULT_POSTGRES))
    parser.add_argument("--redis-url", default=os.environ.get("NEKOMEM_BENCH_REDIS", DEFAULT_REDIS))
    parser.add_argument("--env", action="append", default=[], help="KEY=VALUE for the server, repeatable")
    args = parser.parse_args()
    bodies = turn_bodies(max(args.turns, args.warmup))

    results = []
    for backend in args.backends.split(","):
        with tempfile.TemporaryDirectory(prefix=f"nekomem-bench-{backend}-") as tmp:
            postgres = args.postgres_url if backend == "postgres" else None
            redis = args.redis_url if backend == "postgres" else None
            with server_backend(Path(tmp), postgres_url=postgres, redis_base_url=redis) as server:
                results.extend(bench_backend(backend, server, args, bodies))
                print(f"{backend}: done", file=sys.stderr)
    print_table(results, args)


if __name__ == "__main__":
    main()
