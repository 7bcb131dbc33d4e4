"""Many characters on one host (issue 35): 5 000 characters × 2 000 facts on PostgreSQL under ``make run``.

    nice -n 19 .venv/bin/python bench/many_characters.py                 # load (once), then measure
    .venv/bin/python bench/many_characters.py --reuse                    # the loaded database again
    .venv/bin/python bench/many_characters.py --characters 200 --facts 500   # a small try

Phases:

- ``load``: a database of its own (``--database-url``, created and migrated), its characters, and their
  facts written with PostgreSQL ``COPY`` (10 M rows in minutes; the import path writes ~5 k facts/s).
  The texts are real conversation turns (``../shared/data``: LoCoMo, MemoryBank, MADial in zh and
  en; ``tests/fixtures/recall_sets`` in ja, ko, ru, es, pt, zh-TW), each character drawing its 2 000
  from the pool (most in its own language) and varying some with a time phrase of its language, so
  no two characters hold the same set. 15 % of each character's facts are archived (BM25 only, as
  the archive sweep leaves them). Vectors as production has them after the backfill: the pool's
  distinct texts are embedded once with the server's model, and a varied text reuses the vector of
  the turn it came from (its fingerprint is the varied text's, so the server takes it as current);
  embedding 10 M texts would take days on this machine and changes nothing the bench measures.
- ``snapshots``: every character's saved recall index as a server has it at rest after an import
  (``recall_indexes_prepare``, the import hook's path: built from the database, saved to
  ``var/recall-index``), except the last ``--without-snapshot`` characters, whose first query builds
  from the database (a character whose file was lost, or a server that never saw it). The time per
  build is printed: it is what a first query costs without a file.
- ``serve``: the server started as ``make run`` starts it (``prepare`` + ``serve``, default workers)
  with ``DATABASE_URL``/``REDIS_URL`` set; over HTTP ``/query_memory``:
  cold (the first query of a character no worker holds; random characters, with a saved index and
  without), warm (repeat queries of resident characters), HTTP workers' RSS at the start, after the
  cold sweeps and at the end, and the cap: a sweep over more characters than a worker keeps
  (``MAX_CHARACTERS``), RSS and the index bytes per worker along the way, the loads and evictions
  (from the server log and ``/api/v1/status/``), and the latency of evicted characters asked again.

``--reuse`` keeps the loaded database and the saved indexes (a stamp under ``--work`` says what they
hold) and only removes the snapshots of the ``--without-snapshot`` characters, which the previous run's
builds wrote.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import io
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.shared_data import SETS, probes, turns  # noqa: E402
from tests.support.server_process import (  # noqa: E402
    ProcessInfo,
    ProvisionedDatabase,
    ServerProcess,
    http_call,
    redis_queue_cleanup,
)

DEFAULT_DATABASE = "postgres://postgres@127.0.0.1:5432/nekomem_h35m_many"
DEFAULT_REDIS = "redis://127.0.0.1:6379/6"
DEFAULT_WORK = REPO_ROOT / "var" / "bench-many-characters"
RECALL_SETS = REPO_ROOT / "tests" / "fixtures" / "recall_sets"
STAMP_FORMAT = 1
ARCHIVED_SHARE = 0.15
VARIED_SHARE = 0.3
OWN_LANGUAGE_SHARE = 0.7
# A character's language, by share of the characters (the pool has most text in zh and en).
LANGUAGES: tuple[tuple[str, float], ...] = (
    ("zh", 0.4),
    ("en", 0.4),
    ("ja", 0.04),
    ("ko", 0.04),
    ("ru", 0.03),
    ("es", 0.03),
    ("pt", 0.03),
)
LANGUAGES += (("zh-TW", 0.03),)
TIME_PHRASES = {
    "zh": ("上周", "昨天", "去年夏天", "前几天", "上个月"),
    "zh-TW": ("上週", "昨天", "去年夏天", "前幾天", "上個月"),
    "en": ("Last week", "Yesterday", "Last summer", "A few days ago", "Last month"),
    "ja": ("先週", "昨日", "去年の夏", "数日前", "先月"),
    "ko": ("지난주", "어제", "작년 여름", "며칠 전", "지난달"),
    "ru": ("На прошлой неделе", "Вчера", "Прошлым летом", "Несколько дней назад", "В прошлом месяце"),
    "es": ("La semana pasada", "Ayer", "El verano pasado", "Hace unos días", "El mes pasado"),
    "pt": ("Semana passada", "Ontem", "No verão passado", "Há alguns dias", "No mês passado"),
}
SPACED = {"en", "ru", "es", "pt", "ko"}


# --------------------------------------------------------------------------------------------
# Text pool


def _clean(text: str) -> str:
    return " ".join(text.replace("\\", " ").split())[:300]


def text_pool() -> dict[str, list[str]]:
    """Distinct conversation turns by language (the facts' texts before variation)."""
    pool: dict[str, set[str]] = {}
    for name in SETS:
        for row in turns(name):
            text = _clean(row["text"])
            if len(text) >= 8:
                pool.setdefault("zh" if row.get("lang") == "zh" else "en", set()).add(text)
    for path in sorted(RECALL_SETS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for conversation in data["conversations"]:
            for text in conversation["turns"]:
                pool.setdefault(data["locale"], set()).add(_clean(text))
    return {lang: sorted(texts) for lang, texts in sorted(pool.items())}


def query_pool() -> dict[str, list[str]]:
    """Probe questions by language: what a chat server asks ``/query_memory``."""
    queries: dict[str, list[str]] = {}
    for name in SETS:
        for row in probes(name):
            question = _clean(row["question"])
            if 4 <= len(question) <= 120:
                queries.setdefault("zh" if row.get("lang") == "zh" else "en", []).append(question)
    for path in sorted(RECALL_SETS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        queries.setdefault(data["locale"], []).extend(_clean(p["question"]) for p in data["probes"])
    return queries


def character_language(index: int) -> str:
    rng = random.Random(index * 7919)
    return rng.choices([lang for lang, _ in LANGUAGES], weights=[w for _, w in LANGUAGES])[0]


def character_name(index: int) -> str:
    return f"many{index:05d}"


# --------------------------------------------------------------------------------------------
# Load (in this process, Django on the bench's database)


def django_on(database_url: str, work: Path) -> None:
    os.environ["DATABASE_URL"] = database_url
    os.environ["NEKOMEM_VAR_DIR"] = str(work)  # the server's var/: its snapshots go where it reads them
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nekomem.settings")
    os.environ.setdefault("NEKOMEM_LOG_LEVEL", "WARNING")
    import django

    django.setup()


def database_recreate(database_url: str) -> None:
    import psycopg

    parts = urlsplit(database_url)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]


def pool_vectors(pool: dict[str, list[str]], work: Path) -> tuple[str, dict[str, str]]:
    """(model id, base64 vector by text) of every pool text, embedded once and kept under ``work``."""
    import numpy as np

    from nekomem.embeddings import embed_texts, encode_vector, vector_space

    space = vector_space()
    if space is None:
        raise SystemExit("the embedding model is not available: the bench needs the server's vectors")
    texts = [text for lang in pool for text in pool[lang]]
    cache = work / f"pool-{hashlib.sha256(space.model_id.encode()).hexdigest()[:8]}.npz"
    digest = hashlib.sha256("\0".join(texts).encode()).hexdigest()
    if cache.exists():
        saved = np.load(cache, allow_pickle=False)
        if str(saved["digest"]) == digest:
            return space.model_id, dict(zip(texts, (encode_vector(v) for v in saved["vectors"]), strict=True))
    started = time.monotonic()
    parts = []
    for at in range(0, len(texts), 64):
        vectors = embed_texts(texts[at : at + 64])
        if vectors is None:
            raise SystemExit("embedding failed")
        parts.append(np.asarray(vectors, dtype=np.float32))
    matrix = np.concatenate(parts)
    np.savez(cache, digest=np.array(digest), vectors=matrix)
    print(f"embedded {len(texts)} pool texts in {time.monotonic() - started:.0f} s", flush=True)
    return space.model_id, dict(zip(texts, (encode_vector(v) for v in matrix), strict=True))


def _copy_field(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\t", " ").replace("\n", " ").replace("\r", " ")


def facts_of(index: int, pool: dict[str, list[str]], count: int) -> list[tuple[str, str, str]]:
    """(text, base text, language) of one character's facts: mostly its language's turns, the rest from
    the whole pool, some varied with a time phrase; no text twice."""
    rng = random.Random(index)
    own = character_language(index)
    everything = [(text, lang) for lang in pool for text in pool[lang]]
    chosen: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    while len(chosen) < count:
        if rng.random() < OWN_LANGUAGE_SHARE and pool.get(own):
            base, lang = rng.choice(pool[own]), own
        else:
            base, lang = rng.choice(everything)
        text = base
        if base in seen or rng.random() < VARIED_SHARE:
            phrase = rng.choice(TIME_PHRASES[lang])
            text = f"{phrase}{' ' if lang in SPACED else '，'}{base}"
            if text in seen:
                text = f"{phrase}{' ' if lang in SPACED else '，'}{rng.choice(TIME_PHRASES[lang])} {base}"
        if text in seen:
            continue
        seen.add(text)
        chosen.append((text, base, lang))
    return chosen


def load_facts(*, characters: int, facts: int, work: Path, pool: dict[str, list[str]]) -> float:
    from django.db import connection

    from facts.models import FACT_SCHEMA_VERSION, Fact
    from nekomem.characters.models import Character

    model_id, vectors = pool_vectors(pool, work)
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    Character.objects.bulk_create(
        [
            Character(name=character_name(i), language=character_language(i), last_activity_at=now)
            for i in range(characters)
        ],
        batch_size=1000,
    )
    ids = dict(Character.objects.values_list("name", "pk"))
    columns = (
        "character_id, fact_id, text, importance, entity, source, tags, hash, created_at, event_when_raw,"
        " event_start_at, event_end_at, absorbed, signal_processed, schema_version, archived, archived_at,"
        " embedding, embedding_text_sha256, embedding_model_id, extra, updated_at, dedup_key, dedup_tokens,"
        " subject_key"
    )
    entities = ("master", "neko", "relationship")
    started = time.monotonic()
    written = 0
    raw = connection.cursor().connection  # psycopg's own connection: COPY
    with raw.cursor() as cursor:
        for i in range(characters):
            character_id = ids[character_name(i)]
            rng = random.Random(-1 - i)
            first = now - timedelta(days=730)
            buffer = io.StringIO()
            for n, (text, base, _lang) in enumerate(facts_of(i, pool, facts)):
                created = first + timedelta(minutes=n * 525 + rng.randrange(500))
                sha = hashlib.sha256(text.encode()).hexdigest()
                stamp = created.isoformat()
                archived = n < facts * ARCHIVED_SHARE  # the oldest ones, as the sweep moves them
                buffer.write(
                    "\t".join(
                        (
                            str(character_id),
                            f"fact_{created:%Y%m%d%H%M%S}_{sha[:8]}",
                            _copy_field(text),
                            str(1 + rng.randrange(10)),
                            entities[n % 3],
                            "user_observation",
                            "[]",
                            sha[:16],
                            stamp,
                            "\\N",
                            stamp,
                            "\\N",
                            "t" if archived or rng.random() < 0.2 else "f",
                            "t",
                            str(FACT_SCHEMA_VERSION),
                            "t" if archived else "f",
                            (created + timedelta(days=60)).isoformat() if archived else "\\N",
                            vectors[base],
                            sha,
                            model_id,
                            "{}",
                            stamp,
                            "",
                            "",
                            "",
                        )
                    )
                )
                buffer.write("\n")
            with cursor.copy(f"COPY {Fact._meta.db_table} ({columns}) FROM STDIN") as copy:
                copy.write(buffer.getvalue())
            raw.commit()
            written += facts
            if (i + 1) % 250 == 0 or i + 1 == characters:
                took = time.monotonic() - started
                print(
                    f"  facts: {written:,} of {characters * facts:,} ({written / took:,.0f}/s)",
                    file=sys.stderr,
                    flush=True,
                )
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Fact._meta.db_table}")
    return time.monotonic() - started


def snapshots_prepare(args: argparse.Namespace, names: list[str]) -> tuple[int, float]:
    """Saved indexes of ``names`` (the import hook's path), one process per core; returns (indexes
    built, mean seconds per build)."""
    from nekomem.characters.models import Character

    ids = list(Character.objects.filter(name__in=names).order_by("pk").values_list("pk", flat=True))
    archive_as_swept(ids)
    todo = [pk for pk in ids if not snapshot_files(pk)]
    if not todo:
        return 0, 0.0
    started = time.monotonic()
    procs = []
    for part in range(2):
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    f"--work={args.work}",
                    f"--database-url={args.database_url}",
                    f"--prepare-ids={','.join(map(str, todo[part::2]))}",
                ],
                env=os.environ.copy(),
            )
        )
    for proc in procs:
        if proc.wait() != 0:
            raise SystemExit("snapshot preparation failed")
    took = time.monotonic() - started
    return len(todo), took * 2 / len(todo)


def archive_as_swept(ids: list[int]) -> None:
    """Archive what the server's archive sweep would (absorbed facts older than 7 days), so the saved
    indexes are those of a server at rest, not of one whose first sweep is about to change 17 % of the
    rows. Done for the characters the serve phase asks (the others' sweep runs in the server's cluster
    when it starts)."""
    from django.db import connection

    from facts.models import Fact
    from facts.services.archive import ARCHIVE_AGE

    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Fact._meta.db_table} SET archived = true, archived_at = created_at + %s"
            " WHERE character_id = ANY(%s) AND absorbed AND NOT archived AND created_at < %s",
            [ARCHIVE_AGE * 2, ids, datetime.now(UTC) - ARCHIVE_AGE],  # type: ignore[list-item]
        )


def prepare_ids(ids: list[int]) -> None:
    """In a child: build and save the indexes of ``ids`` (its cache cleared as it goes)."""
    from recall import index_cache

    started = time.monotonic()
    for at in range(0, len(ids), 20):
        index_cache.recall_indexes_prepare(ids[at : at + 20])
        index_cache.clear()
        if (at // 20) % 25 == 0:
            done = at + 20
            print(
                f"  snapshots (pid {os.getpid()}): {done} of {len(ids)}"
                f" ({(time.monotonic() - started) / done * 1000:.0f} ms each)",
                file=sys.stderr,
                flush=True,
            )


def snapshot_folder() -> Path:
    from recall.snapshots import _database_folder

    folder = _database_folder()
    assert folder is not None
    return folder


def snapshot_files(character_id: int) -> list[Path]:
    return list(snapshot_folder().glob(f"{character_id}-*.pickle"))


# --------------------------------------------------------------------------------------------
# Serve: the real server, over HTTP


def _role(cmdline: str) -> str:
    return "cluster" if "qcluster" in cmdline else "http" if "granian" in cmdline else "serve"


def http_workers(server: ServerProcess) -> dict[int, ProcessInfo]:
    """granian's worker processes (not its master, not a worker's short-lived snapshot fork)."""
    processes = server.processes()
    http = {pid for pid, info in processes.items() if _role(info.cmdline) == "http"}
    return {
        pid: info
        for pid, info in processes.items()
        if pid in http and info.ppid in http and processes[info.ppid].ppid not in http
    }


def rss_mb(server: ServerProcess) -> float:
    total = 0.0
    for pid in http_workers(server):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
    return total


def index_usage(server: ServerProcess, tries: int = 6) -> dict[int, dict[str, int]]:
    """Each HTTP worker's recall-index cache (characters, rows, bytes), from ``/api/v1/status/`` asked
    on fresh connections until every worker answered."""
    workers = set(http_workers(server))
    held: dict[int, dict[str, int]] = {}
    for _ in range(tries):
        with contextlib.suppress(OSError, ValueError, KeyError, StopIteration):
            process = http_call(server.port, "GET", "/api/v1/status/", timeout=120).json()["process"]
            held[process["pid"]] = next(c for c in process["caches"] if c["name"] == "recall_indexes")
        if workers <= set(held):
            break
    return {pid: held[pid] for pid in workers if pid in held}


def log_counts(server: ServerProcess, since: int) -> tuple[Counter[str], int]:
    """Index loads and builds logged after byte ``since`` of the server log; and the log's size."""
    data = server.log_path.read_bytes()
    kinds: Counter[str] = Counter()
    for line in data[since:].decode(errors="replace").splitlines():
        if "recall index loaded" in line:
            kinds["loaded"] += 1
        elif "recall index built" in line:
            kinds["built"] += 1
        elif "recall index caught up" in line:
            kinds["caught up"] += 1
    return kinds, len(data)


@dataclass
class Client:
    """One keep-alive connection, as a chat server holds one; it stays with the worker that took it."""

    port: int
    conn: http.client.HTTPConnection = field(init=False)
    outcomes: Counter[str] = field(default_factory=Counter)
    reconnects: int = 0

    def __post_init__(self) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)

    def call(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        for attempt in range(2):
            try:
                self.conn.request(method, quote(path, safe="/?=&"), body, headers)
                response = self.conn.getresponse()
                return response.status, response.read()
            except (OSError, http.client.HTTPException):
                # Closed by the server (idle): a new connection, which may reach another worker.
                self.conn.close()
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
                self.reconnects += 1
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def worker(self) -> int:
        """The pid of the worker behind this connection."""
        status, payload = self.call("GET", "/api/v1/status/")
        assert status == 200, payload[:200]
        return int(json.loads(payload)["process"]["pid"])

    def query(self, name: str, text: str) -> float:
        """ms of one ``/query_memory`` round trip."""
        body = json.dumps({"query": text}, ensure_ascii=False).encode()
        started = time.perf_counter()
        status, payload = self.call("POST", f"/query_memory/{name}", body)
        ms = (time.perf_counter() - started) * 1000
        code = json.loads(payload).get("error_code") if status == 200 else None
        self.outcomes["ok" if status == 200 and not code else f"{status}-{code}"] += 1
        return ms


def worker_clients(server: ServerProcess) -> list[Client]:
    """One keep-alive connection per HTTP worker, as a chat server keeps a few (which worker takes
    each is the kernel's choice: ``/api/v1/status/``, which would say, counts every table's rows and
    takes seconds at 10 M facts)."""
    return [Client(server.port) for _ in http_workers(server)]


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


@dataclass
class Row:
    what: str
    values: list[float]
    note: str = ""

    def line(self) -> str:
        v = self.values
        p50, p95, p99 = pct(v, 50), pct(v, 95), pct(v, 99)
        return f"| {self.what} | {len(v)} | {p50:.1f} | {p95:.1f} | {p99:.1f} | {self.note} |"


@dataclass(frozen=True)
class Plan:
    """Which characters each part of the serve phase asks (a fixed draw: the snapshots phase saves the
    indexes of exactly these)."""

    cold: list[str]  # first query, saved index on disk
    sweep: list[str]  # the cap sweep, saved index on disk
    cold_built: list[str]  # first query, no saved index

    @property
    def saved(self) -> list[str]:
        return self.cold + self.sweep


def plan(args: argparse.Namespace) -> Plan:
    rng = random.Random(args.seed)
    n = args.characters
    with_snapshot = [character_name(i) for i in range(n - args.without_snapshot)]
    without_snapshot = [character_name(i) for i in range(n - args.without_snapshot, n)]
    rng.shuffle(with_snapshot)
    rng.shuffle(without_snapshot)
    return Plan(
        cold=with_snapshot[: args.cold],
        sweep=with_snapshot[args.cold : args.cold + args.sweep],
        cold_built=without_snapshot[: args.cold_built],
    )


def serve_phase(args: argparse.Namespace) -> None:
    queries = query_pool()
    rng = random.Random(args.seed + 1)
    chosen = plan(args)

    def ask(client: Client, name: str) -> float:
        lang = character_language(int(name.removeprefix("many")))
        return client.query(name, rng.choice(queries.get(lang) or queries["en"]))

    parts = urlsplit(args.database_url)
    database = ProvisionedDatabase(url=args.database_url, vendor="postgresql", name=parts.path.lstrip("/"))
    server = ServerProcess(
        database=database,
        var_dir=args.work,
        redis_url=args.redis_url,
        extra_env={"NEKOMEM_LOG_LEVEL": "INFO"},  # the index loads and builds are counted from the log
    )
    server.log_path.unlink(missing_ok=True)
    rows: list[Row] = []
    rss: list[tuple[str, float, str]] = []
    clients: list[Client] = []
    try:
        started = time.monotonic()
        server.start(ready_timeout=600)
        server.wait_warm(timeout=600)
        print(f"server ready in {time.monotonic() - started:.0f} s (port {server.port})", file=sys.stderr)
        clients = worker_clients(server)
        rss.append(("start", rss_mb(server), ""))
        _, mark = log_counts(server, 0)

        # Cold: the first query of characters no worker has held, the workers taking turns.
        cold = [ask(clients[k % len(clients)], name) for k, name in enumerate(chosen.cold)]
        kinds, mark = log_counts(server, mark)
        rows.append(Row("cold, saved index on disk", cold, f"loads/builds: {dict(kinds)}"))
        cold_built = [ask(clients[k % len(clients)], name) for k, name in enumerate(chosen.cold_built)]
        kinds, mark = log_counts(server, mark)
        rows.append(Row("cold, no saved index (build from DB)", cold_built, f"loads/builds: {dict(kinds)}"))
        rss.append(("after the cold sweeps", rss_mb(server), ""))

        # Warm: characters every worker holds (each asked once on each worker first).
        warm = chosen.cold[-args.warm_characters :]
        for name in warm:
            for client in clients:
                ask(client, name)
        _, mark = log_counts(server, 0)
        warm_ms = [ask(clients[k % len(clients)], rng.choice(warm)) for k in range(args.warm)]
        kinds, mark = log_counts(server, mark)
        rows.append(
            Row(f"warm ({len(warm)} resident characters)", warm_ms, f"loads/builds: {dict(kinds) or 0}")
        )

        # The cap: every worker asked for more characters than it keeps (as over hours of chat, when
        # any worker may take any character's query).
        sweep_ms: list[float] = []
        for k, name in enumerate(chosen.sweep, 1):
            for client in clients:
                sweep_ms.append(ask(client, name))
            if k % max(1, len(chosen.sweep) // 5) == 0:
                rss.append((f"cap sweep: {k} characters", rss_mb(server), ""))
        kinds, mark = log_counts(server, mark)
        rows.append(
            Row(
                f"cap sweep: {len(chosen.sweep)} more characters, each asked on every connection",
                sweep_ms,
                f"{dict(kinds)}",
            )
        )
        # The sweep's first characters are now the least recently used everywhere: evicted.
        again = [ask(clients[k % len(clients)], name) for k, name in enumerate(chosen.sweep[: args.requery])]
        kinds, mark = log_counts(server, mark)
        rows.append(Row("evicted, asked again", again, f"loads/builds: {dict(kinds)}"))
        usage = index_usage(server)
        rss.append(("end", rss_mb(server), _usage_note(usage)))
        held = sum(u["entries"] for u in usage.values())
        total, _ = log_counts(server, 0)
    finally:
        for client in clients:
            client.conn.close()
        server.stop()
        with contextlib.suppress(Exception):
            redis_queue_cleanup(args.redis_url, server.q_name)

    outcomes = sum((client.outcomes for client in clients), Counter())
    evicted = total["loaded"] + total["built"] - held
    print()
    print(
        f"### {args.characters:,} characters × {args.facts:,} facts on PostgreSQL, `make run`"
        f" ({len(clients)} HTTP workers): /query_memory round trips, ms"
    )
    print()
    print("| what | n | p50 | p95 | p99 | note |")
    print("|---|---:|---:|---:|---:|---|")
    for row in rows:
        print(row.line())
    print()
    print("| when | HTTP workers' RSS, MB (sum) | indexes held, per worker |")
    print("|---|---:|---|")
    for when, mb, note in rss:
        print(f"| {when} | {mb:,.0f} | {note} |")
    print()
    reconnects = sum(client.reconnects for client in clients)
    print(
        f"Indexes over the run (server log): {dict(total)}; held at the end {held} ({len(usage)} of"
        f" {len(clients)} workers answered the status), so {evicted} evicted at the cap."
        f" Answers: {dict(outcomes)}; reconnections: {reconnects}."
    )


def _usage_note(usage: dict[int, dict[str, int]]) -> str:
    return ", ".join(
        f"{u['entries']} chars / {u['bytes'] / 2**20:,.0f} MiB" for _, u in sorted(usage.items())
    )


# --------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--database-url", default=os.environ.get("NEKOMEM_BENCH_MANY_DATABASE_URL", DEFAULT_DATABASE)
    )
    parser.add_argument("--redis-url", default=DEFAULT_REDIS)
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK, help="the server's var/ (snapshots, log)")
    parser.add_argument("--characters", type=int, default=5000)
    parser.add_argument("--facts", type=int, default=2000)
    parser.add_argument(
        "--without-snapshot", type=int, default=300, help="last characters with no saved index"
    )
    parser.add_argument("--reuse", action="store_true", help="keep the loaded database and saved indexes")
    parser.add_argument("--phases", default="load,snapshots,serve")
    parser.add_argument("--cold", type=int, default=200, help="cold queries of characters with a saved index")
    parser.add_argument("--cold-built", type=int, default=100, help="cold queries of characters without")
    parser.add_argument("--warm-characters", type=int, default=100)
    parser.add_argument("--warm", type=int, default=1000)
    parser.add_argument("--sweep", type=int, default=600, help="characters of the cap sweep (on each worker)")
    parser.add_argument("--requery", type=int, default=100)
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--prepare-ids", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    django_on(args.database_url, args.work)
    if args.prepare_ids:
        prepare_ids([int(pk) for pk in args.prepare_ids.split(",") if pk])
        return
    phases = set(args.phases.split(","))
    stamp_path = args.work / "stamp.json"
    wanted = {
        "format": STAMP_FORMAT,
        "characters": args.characters,
        "facts": args.facts,
        "db": args.database_url,
    }
    stamp = json.loads(stamp_path.read_text()) if stamp_path.exists() else {}
    pool = text_pool()
    print(
        "pool: " + ", ".join(f"{lang} {len(texts)}" for lang, texts in pool.items()) + " distinct texts",
        file=sys.stderr,
    )
    loaded = args.reuse and all(stamp.get(k) == v for k, v in wanted.items()) and stamp.get("loaded")
    if "load" in phases and not loaded:
        database_recreate(args.database_url)
        shutil.rmtree(args.work / "recall-index", ignore_errors=True)
        stamp_path.unlink(missing_ok=True)
        from django.core.management import call_command
        from django.db import connection

        connection.close()
        call_command("migrate", verbosity=0)
        took = load_facts(characters=args.characters, facts=args.facts, work=args.work, pool=pool)
        print(f"loaded {args.characters * args.facts:,} facts in {took:.0f} s", file=sys.stderr)
        stamp_path.write_text(json.dumps({**wanted, "loaded": True}))
    from nekomem.characters.models import Character

    ids = dict(Character.objects.values_list("name", "pk"))
    # The characters meant to have no saved index: a previous run's builds saved one.
    for i in range(args.characters - args.without_snapshot, args.characters):
        for path in snapshot_files(ids[character_name(i)]):
            path.unlink()
    if "snapshots" in phases:
        built, each = snapshots_prepare(args, plan(args).saved)
        if built:
            print(f"saved {built} indexes, {each * 1000:.0f} ms per build", file=sys.stderr)
        files = list(snapshot_folder().glob("*.pickle"))
        print(
            f"saved indexes: {len(files)} files, {sum(p.stat().st_size for p in files) / 2**30:.1f} GiB",
            file=sys.stderr,
        )
    from django.db import connection

    connection.close()
    if "serve" in phases:
        serve_phase(args)


if __name__ == "__main__":
    main()
