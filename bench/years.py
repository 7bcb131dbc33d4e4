"""Two simulated years of chat for 20 characters (issue 35): does memory stay healthy for years?

    nice -n 19 .venv/bin/python bench/years.py [--characters 20] [--days 730] [--chat-every 14]
        [--turns-per-day 3] [--after-minutes 3] [--quiet-hours 48] [--db sqlite|postgres] [--keep]

One process, a scratch database (SQLite in a temporary directory, or ``--db postgres``: a fresh
``nekomem_h35y`` database, ``--postgres URL`` to change it), ``var/`` in the same temporary directory
(the embedding model is read from the repository's ``var/models``). The clock is moved with
time-machine: ``timezone.now()``, ``time.time()`` and so every stored timestamp see the simulated
time (from 2027-01-04, after the real now; on PostgreSQL the raw log too, through
``NEKOMEM_RAW_LOG_CLOCK=server``); latencies are measured with the real clocks.

What a "day of chat" is (the header prints the figures): every ``--chat-every`` days each character
holds one evening session, all of them in the same window, as users who chat after work would:
``GET /new_dialog``, one ``POST /query_memory`` with the first user line, ``--turns-per-day`` turns of
``POST /cache`` (a user line and the companion's answer each, two simulated minutes apart), then
``POST /settle``. The clock still runs through every day between sessions. The default (a session
every 14 days: 53 a character in two years) is what finishes in well under 40 minutes on a loaded
2-core machine; a session every day is ``--chat-every 1`` and costs about 14 times the chat work.
The lines are real conversation text: memorybank-cn and memorybank-en (companion chats), locomo10
(long chats between two people) from ``../shared/data``, and for ja, ko, ru, es, pt and zh-TW the
hand-written locale sets of ``tests/fixtures/recall_sets`` (20 user lines a locale, so those
characters repeat themselves every 20 turns). Each character walks its own stream from its own
offset, cycling when it runs out; the request's ``language`` is the character's.

Schedules: every schedule registered with ``register_schedule`` (so loops added later are run too)
runs through ``nekomem.runtime.tasks.scheduled_tick`` as django-q2 runs it, synchronously: at each stop
of the clock every schedule whose interval has passed since its last run runs once (the cluster's
``catch_up: False``: a long pause gives one run, not one per missed interval). The clock stops at
every turn, at each of the ``--after-minutes`` minutes after the sessions, then every
``--quiet-hours`` until the next session: minute loops run once a minute while anyone chats and
shortly after, then once per stop when nothing arrives; hourly and daily loops at the first stop
after their interval. Tasks and kernel jobs run inline (``NEKOMEM_Q_SYNC``): an outbox op at its
turn's commit, a job when the sweep or a service enqueues it. The LLM is a loopback
OpenAI-compatible server answering every prompt kind validly (``bench/provider_script.py``); a
prompt kind it does not know is answered 500 and shows in the calls-by-kind line at the end
(``NEKOMEM_BENCH_UNKNOWN_LOG=FILE`` writes those prompts to FILE).

At the end of each quarter (8 in two years) a probe window at 21:30 measures ``/new_dialog`` (3 a
character) and ``/query_memory`` (6 a character, questions drawn from that character's own earlier
user lines) one request at a time, wall time and this process's CPU time; then it counts rows per
table, database bytes (SQLite after a WAL checkpoint) and ``var/`` bytes, this process's RSS (it is
the worker: it holds every recall index and the model), persona entries, reflections and facts per
character, and raw messages per character.

Targets (issue 35): each route's p95 within 20 % of the first quarter's; storage grows with the raw
log only: each quarter's storage growth (database + ``var/``) per raw message added no more than
20 % above the first quarter's, Q1 counted from the end of the first session day (so the fixed cost
of a new character is not spread over Q1's messages). Exit status 1 when a target fails.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import itertools
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.provider_script import _BRACKETED_ID, HealthyProvider, prompt_kind, prompt_text  # noqa: E402
from bench.shared_data import conversation, turns  # noqa: E402

DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/nekomem_h35y"
START = datetime(2027, 1, 4, 0, 0, tzinfo=UTC)  # a Monday; every simulated day is after the real now
CHAT_HOUR = 20
PROBE_AT = timedelta(hours=21, minutes=30)
TURN_SPACING = timedelta(minutes=2)
LATENCY_TOLERANCE = 0.20
STORAGE_TOLERANCE = 0.20
QUARTERS = 8
NEW_DIALOGS_PER_CHARACTER = 3
QUERIES_PER_CHARACTER = 6
FIXTURE_LOCALES = ("ja", "ko", "ru", "es", "pt", "zh-TW")
TOP_TABLES = 18


# --------------------------------------------------------------------------------------------
# Conversation text


def _pairs(rows: list[dict]) -> list[tuple[str, str]]:
    return [
        (first["text"], second["text"])
        for first, second in itertools.pairwise(rows)
        if first["role"] == "user" and second["role"] == "assistant"
    ]


def dataset_pairs(dataset: str) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for conv_id in sorted({row["conv_id"] for row in turns(dataset)}):
        pairs += _pairs(conversation(dataset, conv_id))
    return pairs


def fixture_pairs(locale: str) -> list[tuple[str, str]]:
    data = json.loads((REPO_ROOT / "tests" / "fixtures" / "recall_sets" / f"{locale}.json").read_text())
    pairs: list[tuple[str, str]] = []
    for conv in data["conversations"]:
        lines = conv["turns"]
        pairs += [(lines[i], lines[i + 1]) for i in range(0, len(lines) - 1, 2)]
    return pairs


@dataclass
class Persona:
    name: str
    language: str
    source: str
    lines: list[tuple[str, str]]
    offset: int
    said: list[str] = field(default_factory=list)  # user lines sent so far (the probe questions)

    def pair(self, n: int) -> tuple[str, str]:
        return self.lines[(self.offset + n) % len(self.lines)]


def cast(count: int) -> list[Persona]:
    """zh and en from the shared data (the bulk, as real users), one character per other locale."""
    zh = dataset_pairs("memorybank-cn")
    en = dataset_pairs("memorybank-en") + dataset_pairs("locomo10")
    pools: list[tuple[str, str, list[tuple[str, str]]]] = [
        (locale, "recall_sets fixture", fixture_pairs(locale)) for locale in FIXTURE_LOCALES
    ]
    cast_: list[Persona] = []
    for i in range(count):
        if i % 10 in (3, 6, 9) or i >= 20:
            locale, source, lines = pools[len([p for p in cast_ if p.source.startswith("recall")]) % 6]
        elif i % 2 == 0:
            locale, source, lines = "zh", "memorybank-cn", zh
        else:
            locale, source, lines = "en", "memorybank-en + locomo10", en
        cast_.append(Persona(f"years{i:02d}", locale, source, lines, offset=(i * 7919) % len(lines)))
    return cast_


# --------------------------------------------------------------------------------------------
# Measurement helpers


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def rss_mb() -> tuple[float, float]:
    """This process's resident memory now and its peak (MB)."""
    now = peak = 0.0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            now = int(line.split()[1]) / 1024
        elif line.startswith("VmHWM:"):
            peak = int(line.split()[1]) / 1024
    return now, peak


def dir_bytes(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, name)).st_size
    return total


def database_bytes(sqlite_path: Path | None) -> int:
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_database_size(current_database())")
            return int(cursor.fetchone()[0])
    assert sqlite_path is not None
    with connection.cursor() as cursor:
        # The write-ahead log's size swings with the last checkpoint: measure the database itself.
        cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in sqlite_path.parent.glob(sqlite_path.name + "*") if p.is_file())


def table_rows() -> dict[str, int]:
    from django.db import connection

    counts: dict[str, int] = {}
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f'SELECT COUNT(*) FROM "{table}"')
            counts[table] = int(cursor.fetchone()[0])
    return counts


def raw_log_bytes() -> int:
    """Bytes of raw-log text (the message JSON of every raw row): what 'the raw log' weighs."""
    from django.db.models import Sum
    from django.db.models.functions import Length

    from recent.models import RawMessage

    return int(RawMessage.objects.aggregate(n=Sum(Length("message")))["n"] or 0)


def per_character(model: Any, **filters: Any) -> tuple[float, int]:
    from django.db.models import Count

    from nekomem.characters.models import Character

    counts = dict(
        model.objects.filter(**filters)
        .values("character")
        .annotate(n=Count("pk"))
        .values_list("character", "n")
    )
    values = [counts.get(pk, 0) for pk in Character.objects.values_list("pk", flat=True)]
    return (statistics.fmean(values) if values else 0.0), max(values, default=0)


# --------------------------------------------------------------------------------------------
# The simulation


class Schedules:
    """Every registered schedule, run as django-q2 runs it: once when due, next due an interval later."""

    def __init__(self) -> None:
        from nekomem.runtime.schedules import registered_schedules

        self.specs = registered_schedules()
        self.next_due: dict[str, datetime] = {}
        self.runs: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.seconds: defaultdict[str, float] = defaultdict(float)

    def run_due(self, now: datetime) -> None:
        from nekomem.runtime.tasks import scheduled_tick

        for spec in self.specs:
            due = self.next_due.get(spec.name)
            if due is not None and due > now:
                continue
            began = time.perf_counter()
            try:
                scheduled_tick(spec.func)
            except Exception as exc:  # django-q2 records a failed task and schedules the next run
                self.failures[spec.name] += 1
                if self.failures[spec.name] <= 3:
                    print(f"  schedule {spec.name} failed: {exc!r}", file=sys.stderr)
            self.seconds[spec.name] += time.perf_counter() - began
            self.runs[spec.name] += 1
            self.next_due[spec.name] = now + timedelta(minutes=spec.minutes)


class Tracer:
    """``--trace DIR``: one JSON line per probe request (wall, this process's CPU, the request thread's
    own CPU, what the recall index cache did, the other threads alive) in DIR/calls.jsonl, and with
    ``--trace-profile-ms N`` a cProfile of each request whose thread CPU passed N ms (DIR/*.prof)."""

    def __init__(self, directory: Path, profile_ms: float | None) -> None:
        self.directory = directory
        self.profile_ms = profile_ms
        self.quarter = "start"
        self.seen: set[tuple[str, str]] = set()
        directory.mkdir(parents=True, exist_ok=True)
        self.log = (directory / "calls.jsonl").open("a", encoding="utf-8")
        self.n = 0
        # The cyclic collector's pauses land in whichever request is running; their cost grows with
        # every live object in the process, not with the request's own character.
        self.gc_ms = 0.0
        self.gc_runs: Counter[int] = Counter()
        self._gc_began = 0.0
        gc.callbacks.append(self._on_gc)

    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_began = time.perf_counter()
        else:
            self.gc_ms += (time.perf_counter() - self._gc_began) * 1000
            self.gc_runs[info["generation"]] += 1

    @contextlib.contextmanager
    def call(self, route: str, character: str) -> Any:
        import cProfile
        import threading

        from recall import index_cache

        before = Counter(index_cache.counters)
        gc_ms_before, gc_runs_before = self.gc_ms, Counter(self.gc_runs)
        profiler = cProfile.Profile() if self.profile_ms is not None else None
        wall, cpu, own = time.perf_counter(), time.process_time(), time.thread_time()
        if profiler is not None:
            profiler.enable()
        try:
            yield
        finally:
            if profiler is not None:
                profiler.disable()
            own_ms = (time.thread_time() - own) * 1000
            record = {
                "quarter": self.quarter,
                "route": route,
                "character": character,
                "first": (route, character) not in self.seen,
                "wall_ms": round((time.perf_counter() - wall) * 1000, 2),
                "cpu_ms": round((time.process_time() - cpu) * 1000, 2),
                "thread_cpu_ms": round(own_ms, 2),
                "index": dict(Counter(index_cache.counters) - before),
                "gc_ms": round(self.gc_ms - gc_ms_before, 2),
                "gc_generations": {str(g): n for g, n in (self.gc_runs - gc_runs_before).items()},
                "threads": sorted(t.name for t in threading.enumerate() if t is not threading.main_thread()),
            }
            self.seen.add((route, character))
            if profiler is not None and self.profile_ms is not None and own_ms >= self.profile_ms:
                self.n += 1
                name = f"{self.quarter}-{self.n:04d}-{route}-{character}.prof"
                profiler.dump_stats(self.directory / name)
                record["profile"] = name
            self.log.write(json.dumps(record) + "\n")
            self.log.flush()


@dataclass
class Quarter:
    label: str
    day: int
    rows: dict[str, int]
    db_bytes: int
    var_bytes: int
    raw_bytes: int
    raw_messages: int
    rss: float
    rss_peak: float
    latencies: dict[str, list[float]]
    persona: tuple[float, int]
    reflections: tuple[float, int]
    reflections_live: tuple[float, int]
    facts: tuple[float, int]
    wall_seconds: float


class Years:
    def __init__(self, args: argparse.Namespace, work: Path, sqlite_path: Path | None) -> None:
        from django.test import Client

        self.args = args
        self.work = work
        self.sqlite_path = sqlite_path
        self.client = Client(HTTP_HOST="127.0.0.1")
        self.people = cast(args.characters)
        self.schedules = Schedules()
        self.statuses: Counter[tuple[str, int]] = Counter()
        self.errors: Counter[str] = Counter()
        self.turns_sent = 0
        self.surfaced = 0
        self.rng = random.Random(35)
        self.quiet = timedelta(hours=args.quiet_hours)
        self.next_quiet = START + self.quiet
        self.tracer = Tracer(Path(args.trace), args.trace_profile_ms) if args.trace else None

    # --- wire routes (the chat server's side) ---

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        response = self.client.post(
            path, data=json.dumps(body, ensure_ascii=False), content_type="application/json"
        )
        self.statuses[(path.split("/")[1], response.status_code)] += 1
        return response

    def _history(self, person: Persona, messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {"input_history": json.dumps(messages, ensure_ascii=False), "language": person.language}

    def session(self, person: Persona, session: int, turn: int) -> None:
        user, assistant = person.pair(session * self.args.turns_per_day + turn)
        if turn == 0:
            self.client.get(f"/new_dialog/{person.name}", {"language": person.language})
            if person.said:
                self._post(f"/query_memory/{person.name}", {"query": user[:80], "language": person.language})
            # The chat server asks for a follow-up topic and, when the companion brings one up in its
            # first reply, records it as surfaced: the master's next turns then give it feedback.
            topics = self.client.get(f"/followup_topics/{person.name}").json().get("topics") or []
            if topics:
                self._post(f"/record_surfaced/{person.name}", {"reflection_ids": [topics[0]["id"]]})
                self.surfaced += 1
        messages = [
            {"type": "human", "data": {"content": user}},
            {"type": "ai", "data": {"content": assistant}},
        ]
        response = self._post(f"/cache/{person.name}", self._history(person, messages))
        if response.status_code != 200 or response.json().get("status") != "cached":
            self.errors["cache"] += 1
        person.said.append(user)
        self.turns_sent += 1

    def settle(self, person: Persona) -> None:
        response = self._post(f"/settle/{person.name}", self._history(person, []))
        if response.status_code != 200 or response.json().get("status") != "settled":
            self.errors["settle"] += 1

    # --- the clock ---

    def advance_to(self, traveller: Any, target: datetime) -> None:
        """Move the clock to ``target``, stopping every ``--quiet-hours`` on the way to run due schedules."""
        while self.next_quiet <= target:
            traveller.move_to(self.next_quiet)
            self.schedules.run_due(self.next_quiet)
            self.next_quiet += self.quiet
        traveller.move_to(target)

    def chat_day(self, traveller: Any, day: int, session: int) -> None:
        chat = START + timedelta(days=day, hours=CHAT_HOUR)
        self.advance_to(traveller, chat)
        for turn in range(self.args.turns_per_day):
            now = chat + turn * TURN_SPACING
            traveller.move_to(now)
            for person in self.people:
                self.session(person, session, turn)
            traveller.move_to(now + TURN_SPACING / 2)
            self.schedules.run_due(now + TURN_SPACING / 2)
        end = chat + self.args.turns_per_day * TURN_SPACING
        traveller.move_to(end)
        for person in self.people:
            self.settle(person)
        for minute in range(1, self.args.after_minutes + 1):
            now = end + timedelta(minutes=minute)
            traveller.move_to(now)
            self.schedules.run_due(now)
        self.next_quiet = end + timedelta(minutes=self.args.after_minutes) + self.quiet

    # --- a quarter's end ---

    def probe(self, traveller: Any, day: int) -> dict[str, list[float]]:
        self.advance_to(traveller, START + timedelta(days=day) + PROBE_AT)
        latencies: dict[str, list[float]] = defaultdict(list)
        plan: list[tuple[str, Persona, str]] = []
        for person in self.people:
            plan += [("new_dialog", person, "")] * NEW_DIALOGS_PER_CHARACTER
            for _ in range(QUERIES_PER_CHARACTER):
                plan.append(
                    ("query_memory", person, self.rng.choice(person.said)[:80] if person.said else "hi")
                )
        self.rng.shuffle(plan)
        for route, person, query in plan:
            tracer = self.tracer.call(route, person.name) if self.tracer else contextlib.nullcontext()
            with tracer:
                began, cpu_began = time.perf_counter(), time.process_time()
                if route == "new_dialog":
                    response = self.client.get(f"/new_dialog/{person.name}", {"language": person.language})
                    ok = response.status_code == 200
                else:
                    response = self._post(
                        f"/query_memory/{person.name}", {"query": query, "language": person.language}
                    )
                    ok = response.status_code == 200 and not response.json().get("error_code")
                elapsed = (time.perf_counter() - began) * 1000
                cpu = (time.process_time() - cpu_began) * 1000
            if ok:
                latencies[route].append(elapsed)
                latencies[f"{route} cpu"].append(cpu)
            else:
                self.errors[f"probe {route}"] += 1
        return latencies

    def measure(self, label: str, day: int, latencies: dict[str, list[float]], wall: float) -> Quarter:
        from facts.models import Fact
        from persona.models import PersonaEntry
        from recent.models import RawMessage
        from reflections.models import Reflection

        rss, peak = rss_mb()
        return Quarter(
            label=label,
            day=day,
            rows=table_rows(),
            db_bytes=database_bytes(self.sqlite_path),
            var_bytes=dir_bytes(self.work / "var"),
            raw_bytes=raw_log_bytes(),
            raw_messages=RawMessage.objects.count(),
            rss=rss,
            rss_peak=peak,
            latencies=latencies,
            persona=per_character(PersonaEntry, archived_at__isnull=True),
            reflections=per_character(Reflection),
            reflections_live=per_character(Reflection, status__in=["pending", "confirmed"]),
            facts=per_character(Fact),
            wall_seconds=wall,
        )


# --------------------------------------------------------------------------------------------
# Output


def print_table(title: str, header: list[str], rows: list[list[Any]]) -> None:
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in [header, *cells]) for i in range(len(header))]
    print(f"\n{title}")
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |")


def mb(n: float) -> str:
    return f"{n / 1e6:.1f}"


def report(years: Years, baseline: Quarter, quarters: list[Quarter], provider: HealthyProvider) -> bool:
    characters = len(years.people)
    final = quarters[-1].rows
    tables = sorted(final, key=lambda t: -final[t])[:TOP_TABLES]
    print_table(
        f"Rows per table at each quarter's end (the {TOP_TABLES} largest at the end; all tables: total)",
        ["table", *(q.label for q in quarters)],
        [[t, *(q.rows.get(t, 0) for q in quarters)] for t in tables]
        + [["(all tables)", *(sum(q.rows.values()) for q in quarters)]],
    )

    q1 = quarters[0]
    routes = ("new_dialog", "query_memory")
    p95_q1 = {key: percentile(q1.latencies[key], 0.95) for key in (*routes, *(f"{r} cpu" for r in routes))}
    latency_ok = cpu_ok = True
    rows = []
    for q in quarters:
        row: list[Any] = [q.label, q.day]
        verdicts, cpu_verdicts = [], []
        for route in routes:
            values = q.latencies[route]
            p95 = percentile(values, 0.95)
            cpu_p95 = percentile(q.latencies[f"{route} cpu"], 0.95)
            verdicts.append(p95 <= p95_q1[route] * (1 + LATENCY_TOLERANCE))
            cpu_verdicts.append(cpu_p95 <= p95_q1[f"{route} cpu"] * (1 + LATENCY_TOLERANCE))
            row += [
                len(values),
                f"{percentile(values, 0.5):.1f}",
                f"{p95:.1f}",
                f"{p95 / p95_q1[route]:.2f}",
                f"{cpu_p95:.1f}",
                f"{cpu_p95 / p95_q1[f'{route} cpu']:.2f}",
            ]
        latency_ok &= all(verdicts)
        cpu_ok &= all(cpu_verdicts)
        row += ["PASS" if all(verdicts) else "FAIL", "PASS" if all(cpu_verdicts) else "FAIL"]
        rows.append(row)
    print_table(
        f"Latency in the probe window at each quarter's end (ms; one request at a time, in-process; target: "
        f"each p95 within {LATENCY_TOLERANCE:.0%} of Q1's. 'cpu': this process's CPU time per request, "
        "which the machine's other load does not stretch)",
        [
            "quarter",
            "day",
            "new_dialog n",
            "p50",
            "p95",
            "x Q1",
            "cpu p95",
            "x Q1",
            "query_memory n",
            "p50",
            "p95",
            "x Q1",
            "cpu p95",
            "x Q1",
            "target",
            "target (cpu)",
        ],
        rows,
    )

    storage_ok = True
    rows = []
    marginal_q1: float | None = None
    previous = baseline
    for q in quarters:
        storage = q.db_bytes + q.var_bytes
        added_storage = storage - (previous.db_bytes + previous.var_bytes)
        added_raw = q.raw_messages - previous.raw_messages
        marginal = added_storage / added_raw if added_raw else float("nan")
        if marginal_q1 is None and added_raw:
            marginal_q1 = marginal
        reference = marginal_q1 or float("nan")
        ok = None if not added_raw else marginal <= reference * (1 + STORAGE_TOLERANCE)
        storage_ok &= ok is not False
        rows.append(
            [
                q.label,
                mb(q.db_bytes),
                mb(q.var_bytes),
                f"{storage / characters / 1e6:.2f}",
                f"{q.raw_messages / characters:.0f}",
                f"{q.raw_bytes / characters / 1e6:.3f}",
                f"{storage / max(1, q.raw_bytes):.0f}",
                f"{marginal / 1e3:.2f}",
                f"{marginal / reference:.2f}",
                {True: "PASS", False: "FAIL", None: "n/a (no new raw messages)"}[ok],
            ]
        )
        previous = q
    print_table(
        f"Storage (MB). PASS: the quarter's storage growth per raw message added is within "
        f"{STORAGE_TOLERANCE:.0%} of Q1's (Q1 counted from the end of the first session day, "
        f"{mb(baseline.db_bytes)} MB database, {baseline.raw_messages} raw messages)",
        [
            "quarter",
            "database",
            "var/",
            "per character",
            "raw msgs/char",
            "raw log MB/char",
            "storage / raw-log bytes",
            "KB added per raw msg",
            "x Q1",
            "target",
        ],
        rows,
    )

    print_table(
        "Memory per character (mean / max) and the process",
        [
            "quarter",
            "persona entries (live)",
            "reflections (all)",
            "reflections pending+confirmed",
            "facts",
            "RSS MB",
            "peak RSS MB",
            "wall min",
        ],
        [
            [
                q.label,
                f"{q.persona[0]:.1f} / {q.persona[1]}",
                f"{q.reflections[0]:.1f} / {q.reflections[1]}",
                f"{q.reflections_live[0]:.1f} / {q.reflections_live[1]}",
                f"{q.facts[0]:.0f} / {q.facts[1]}",
                f"{q.rss:.0f}",
                f"{q.rss_peak:.0f}",
                f"{q.wall_seconds / 60:.1f}",
            ]
            for q in quarters
        ],
    )

    schedules = years.schedules
    print_table(
        "Schedules run (simulated ticks; real seconds spent in them)",
        ["schedule", "every (min)", "runs", "failures", "seconds"],
        [
            [
                s.name,
                s.minutes,
                schedules.runs[s.name],
                schedules.failures[s.name],
                f"{schedules.seconds[s.name]:.1f}",
            ]
            for s in schedules.specs
        ],
    )
    print(f"\nLLM calls by prompt kind: {provider.counts()}")
    print(f"route statuses: {', '.join(f'{r} {s}: {n}' for (r, s), n in sorted(years.statuses.items()))}")
    print(f"errors: {dict(years.errors) or 'none'}; follow-up topics recorded as surfaced: {years.surfaced}")
    verdict = {True: "PASS", False: "FAIL"}
    print(
        f"\nlatency target: {verdict[latency_ok]} (on CPU time: {verdict[cpu_ok]}); "
        f"storage target: {verdict[storage_ok]}"
    )
    return latency_ok and storage_ok


# --------------------------------------------------------------------------------------------
# Set-up


def prepare_environment(args: argparse.Namespace, work: Path) -> Path | None:
    """Environment for Django before it starts; the SQLite file's path (None on PostgreSQL)."""
    os.environ["NEKOMEM_VAR_DIR"] = str(work / "var")
    os.environ.setdefault("NEKOMEM_MODEL_DIR", str(REPO_ROOT / "var" / "models"))
    os.environ["NEKOMEM_Q_SYNC"] = "1"  # tasks and jobs run inline, as the cluster would run them
    os.environ["NEKOMEM_OUTBOX_BATCH_MS"] = "0"
    os.environ["NEKOMEM_LLM_RETRY_BASE_DELAY"] = "0.01"
    os.environ["NEKOMEM_LOG_LEVEL"] = os.environ.get("NEKOMEM_LOG_LEVEL", "ERROR")
    os.environ["DJANGO_SETTINGS_MODULE"] = "nekomem.settings"
    os.environ.pop("REDIS_URL", None)
    (work / "var").mkdir()
    if args.db == "postgres":
        import psycopg

        url = args.postgres
        base, _, name = url.rpartition("/")
        with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        os.environ["DATABASE_URL"] = url
        # The one-statement turn stamps the raw log with the database's clock, which time-machine
        # does not move: extraction, reflection and persona would find no turn in simulated time.
        os.environ["NEKOMEM_RAW_LOG_CLOCK"] = "server"
        return None
    path = work / "years.sqlite3"
    os.environ["DATABASE_URL"] = f"sqlite:///{path}"
    return path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--characters", type=int, default=20)
    parser.add_argument("--days", type=int, default=730)
    parser.add_argument(
        "--turns-per-day", type=int, default=3, help="turns of each character's daily session"
    )
    parser.add_argument(
        "--chat-every",
        type=int,
        default=14,
        help="days from one session to the next (every character chats on the same evening); the clock "
        "still runs through every day between",
    )
    parser.add_argument(
        "--after-minutes", type=int, default=3, help="clock stops, a minute apart, after the sessions"
    )
    parser.add_argument("--quiet-hours", type=float, default=48.0, help="hours between clock stops overnight")
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES)
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument(
        "--trace", metavar="DIR", help="write each probe request's timings and index work to DIR/calls.jsonl"
    )
    parser.add_argument(
        "--trace-profile-ms",
        type=float,
        metavar="N",
        help="with --trace: cProfile every probe request, keep those whose own CPU passed N ms",
    )
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="nekomem-years-"))
    sqlite_path = prepare_environment(args, work)

    from tests.support.llm_server import ScriptedLLMServer, json_content

    provider = HealthyProvider()
    server = ScriptedLLMServer()
    server.fallback = provider.answer

    feedback_calls = itertools.count()

    def answer(body: Any) -> Any:
        text = prompt_text(body)
        if prompt_kind(text) == "feedback" and next(feedback_calls) % 2 == 0:
            # Every other time the master takes up the topic the companion raised (the healthy
            # provider alone always answers "ignored", and no reflection would ever be confirmed).
            provider.kinds["feedback (confirmed)"] += 1
            ids = _BRACKETED_ID.findall(text)
            return json_content([{"reflection_id": rid, "feedback": "confirmed"} for rid in ids])
        reply = provider.answer(body)
        if reply.status != 200 and os.environ.get("NEKOMEM_BENCH_UNKNOWN_LOG"):
            with open(os.environ["NEKOMEM_BENCH_UNKNOWN_LOG"], "a", encoding="utf-8") as fh:
                fh.write(prompt_text(body)[-1500:] + "\n=====\n")
        return reply

    server.fallback = answer
    server.start()
    for tier in ("SUMMARY", "CORRECTION", "EMOTION"):
        os.environ[f"NEKOMEM_LLM_{tier}_BASE_URL"] = server.base_url
        os.environ[f"NEKOMEM_LLM_{tier}_API_KEY"] = "bench"
        os.environ[f"NEKOMEM_LLM_{tier}_MODEL"] = f"bench-{tier.lower()}"

    import django
    import time_machine

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("prestart", verbosity=0, stdout=io.StringIO())

    from nekomem.embeddings.state import get_embedder
    from nekomem.runtime.startup import startup_run
    from nekomem.runtime.warmups import warm_ups_before_serving

    if not startup_run():
        raise SystemExit("the storage did not become ready (schema check or reconcile failed)")
    warm_ups_before_serving()
    embedder = get_embedder()

    years = Years(args, work, sqlite_path)
    from django.db import connection

    quarter_ends = sorted({max(1, round((q + 1) * args.days / QUARTERS)) - 1 for q in range(QUARTERS)})
    languages = Counter(p.language for p in years.people)
    print(
        f"bench/years.py: {args.characters} characters x {args.days} simulated days on {connection.vendor}"
        f" (embeddings: {embedder.model_id if embedder else 'off'})\n"
        f"a day of chat = per character one evening session every {args.chat_every} simulated day(s) "
        f"(all characters the same evening): /new_dialog, one /query_memory, {args.turns_per_day} turns of "
        f"/cache (a user line + the companion's answer: {2 * args.turns_per_day} raw messages), /settle; "
        f"turns {TURN_SPACING.seconds // 60} min apart; {len(range(0, args.days, args.chat_every))} sessions "
        f"a character in {args.days} days\n"
        f"clock stops: each turn, {args.after_minutes} x 1 min after the sessions, then every "
        f"{args.quiet_hours:g} h until the next session; at each stop every due schedule runs once "
        f"({len(years.schedules.specs)} schedules: {', '.join(s.name for s in years.schedules.specs)})\n"
        f"languages: {', '.join(f'{k} {v}' for k, v in sorted(languages.items()))}; "
        f"quarters end on days {', '.join(str(d + 1) for d in quarter_ends)}",
        flush=True,
    )

    empty = years.measure("empty", 0, {}, 0.0)
    baseline_q = empty
    quarters: list[Quarter] = []
    began = time.perf_counter()
    with time_machine.travel(START, tick=False) as traveller:
        sessions = 0
        for day in range(args.days):
            if day % args.chat_every == 0:
                years.chat_day(traveller, day, sessions)
                sessions += 1
                if day == 0:  # the per-character fixed cost (rows, first pages) is paid by now
                    baseline_q = years.measure("start", 1, {}, time.perf_counter() - began)
            if day in quarter_ends:
                label = f"Q{len(quarters) + 1}"
                if years.tracer is not None:
                    years.tracer.quarter = label
                    years.tracer.seen.clear()
                    tracked = len(gc.get_objects())
                    print(f"  {label}: {tracked} objects tracked by the collector", file=sys.stderr)
                latencies = years.probe(traveller, day)
                quarter = years.measure(label, day + 1, latencies, time.perf_counter() - began)
                quarters.append(quarter)
                nd, qm = latencies["new_dialog"], latencies["query_memory"]
                print(
                    f"{label} day {day + 1}: {quarter.raw_messages} raw messages, "
                    f"db {mb(quarter.db_bytes)} MB, "
                    f"var {mb(quarter.var_bytes)} MB, RSS {quarter.rss:.0f} MB, new_dialog p95 "
                    f"{percentile(nd, 0.95):.1f} ms, query_memory p95 {percentile(qm, 0.95):.1f} ms, "
                    f"persona {quarter.persona[0]:.1f}/char, reflections {quarter.reflections[0]:.1f}/char; "
                    f"{(time.perf_counter() - began) / 60:.1f} min",
                    flush=True,
                )
            elif day % 10 == 9:
                print(
                    f"  day {day + 1}: {(time.perf_counter() - began) / 60:.1f} min",
                    file=sys.stderr,
                    flush=True,
                )
    server.stop()
    print(f"empty migrated database: {mb(empty.db_bytes)} MB")
    passed = report(years, baseline_q, quarters, provider)
    if not args.keep:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"scratch directory kept: {work}")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
