"""Start and stop the real memory server (``make run``'s sequence) against a database of its own.

Used by the end-to-end tests and by ``bench/cache_throughput.py``. Everything here talks to the
server only over HTTP and to its database only through plain DB-API connections, so it never
touches the test process's Django connections.

- ``provision_database`` creates a fresh SQLite file or PostgreSQL database (dropped by ``drop``).
- ``ServerProcess`` runs the ``run`` recipe of the Makefile (``prepare``: migrate, setup_schedules,
  prestart, collectstatic; then serve) with the plain ``nekomem.settings``. ``serve`` starts the HTTP
  server and the django-q2 cluster in process groups of their own, so ``kill`` (SIGKILL) and ``stop``
  act on the whole process tree under ``serve``, read from /proc.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import shlex
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg

REPO_ROOT = Path(__file__).resolve().parents[2]
MAKEFILE = REPO_ROOT / "Makefile"
# Redis database for server processes started by tests and benchmarks; the queue key also carries
# a per-process cluster name (NEKOMEM_Q_NAME), so concurrent runs on one machine never meet.
E2E_REDIS_DB = int(os.environ.get("NEKOMEM_E2E_REDIS_DB", "14"))
# Variables of the test process that must not leak into a real server's environment.
# numpy's thread pools: the server must switch them off itself.
_SCRUBBED_ENV = (
    "DJANGO_SETTINGS_MODULE",
    "DATABASE_URL",
    "REDIS_URL",
    "NEKOMEM_Q_SYNC",
    "NEKOMEM_Q_NAME",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def make_run_commands() -> list[list[str]]:
    """The ``run`` recipe of the Makefile, with ``$(PY)`` resolved to this interpreter."""
    lines = MAKEFILE.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"^run\s*:", line))
    commands = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        commands.append([sys.executable if word == "$(PY)" else word for word in shlex.split(line.strip())])
    if not commands or commands[-1][1:] != ["manage.py", "serve"]:
        raise RuntimeError(f"the Makefile's run recipe no longer ends in `manage.py serve`: {commands}")
    return commands


# --------------------------------------------------------------------------------------------
# Databases


@dataclass
class ProvisionedDatabase:
    """A database created for one server run; ``query`` reads it with a short-lived connection."""

    url: str
    vendor: str  # "sqlite" or "postgresql"
    admin_conninfo: str = ""  # PostgreSQL: where to drop it from
    name: str = ""

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one read with ``%s`` placeholders and return every row."""
        if self.vendor == "sqlite":
            with contextlib.closing(sqlite3.connect(self.name, timeout=30)) as conn:
                return list(conn.execute(sql.replace("%s", "?"), tuple(params)).fetchall())
        with psycopg.connect(self.url_conninfo(), autocommit=True) as conn:
            return list(conn.execute(sql, tuple(params)).fetchall())  # type: ignore[arg-type]

    def url_conninfo(self) -> str:
        parts = urlsplit(self.url)
        return psycopg.conninfo.make_conninfo(
            host=parts.hostname or "127.0.0.1",
            port=str(parts.port or 5432),
            user=parts.username or "postgres",
            password=parts.password or "",
            dbname=parts.path.lstrip("/"),
        )

    def drop(self) -> None:
        if self.vendor == "sqlite":
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(self.name + suffix).unlink(missing_ok=True)
            return
        with psycopg.connect(self.admin_conninfo, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')  # type: ignore[arg-type]


def postgres_base_url() -> str | None:
    """The PostgreSQL server of this run (``DATABASE_URL``), or None on the embedded default."""
    url = os.environ.get("DATABASE_URL", "")
    return url if url.startswith(("postgres://", "postgresql://")) else None


def provision_database(tmp_dir: Path, *, postgres_url: str | None) -> ProvisionedDatabase:
    """A fresh, empty database: a SQLite file under ``tmp_dir`` or a new PostgreSQL database."""
    if postgres_url is None:
        path = tmp_dir / f"nekomem-{uuid.uuid4().hex[:8]}.sqlite3"
        return ProvisionedDatabase(url=f"sqlite:///{path}", vendor="sqlite", name=str(path))
    parts = urlsplit(postgres_url)
    name = f"nekomem_e2e_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    admin = psycopg.conninfo.make_conninfo(
        host=parts.hostname or "127.0.0.1",
        port=str(parts.port or 5432),
        user=parts.username or "postgres",
        password=parts.password or "",
        dbname="postgres",
    )
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
    url = urlunsplit(parts._replace(path=f"/{name}"))
    return ProvisionedDatabase(url=url, vendor="postgresql", admin_conninfo=admin, name=name)


def e2e_redis_url(base_url: str) -> str:
    """The dedicated Redis database for server processes, on the server of ``base_url``."""
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=f"/{E2E_REDIS_DB}"))


def redis_queue_cleanup(redis_url: str, q_name: str) -> None:
    """Delete the keys a cluster named ``q_name`` left in Redis."""
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(match=f"django_q:{q_name}:*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


# --------------------------------------------------------------------------------------------
# HTTP


@dataclass(frozen=True)
class HttpResult:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)  # names in lower case

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8")


def http_call(port: int, method: str, path: str, body: Any = None, *, timeout: float = 30.0) -> HttpResult:
    """One request on a fresh connection (raises on connection errors)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        payload = None if body is None else json.dumps(body, ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json"} if payload is not None else {}
        conn.request(method, quote(path, safe="/?=&"), body=payload, headers=headers)
        response = conn.getresponse()
        response_headers = {name.lower(): value for name, value in response.getheaders()}
        return HttpResult(response.status, response.read(), response_headers)
    finally:
        conn.close()


def history_body(messages: list[dict[str, Any]], language: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"input_history": json.dumps(messages, ensure_ascii=False)}
    if language:
        body["language"] = language
    return body


# --------------------------------------------------------------------------------------------
# The server process


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    ppid: int
    process_group: int
    niceness: int
    cpu_seconds: float  # user + system, this process's own
    started: int  # clock ticks after boot: with the pid, names this process and no later one
    cmdline: str


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def running_processes() -> dict[int, ProcessInfo]:
    """Every process on the machine, from /proc."""
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()  # after the command name, which may hold spaces
        found[int(pid)] = ProcessInfo(
            pid=int(pid),
            ppid=int(fields[1]),
            process_group=int(fields[2]),
            niceness=int(fields[16]),
            cpu_seconds=(int(fields[11]) + int(fields[12])) / _CLOCK_TICKS,
            started=int(fields[19]),
            cmdline=cmdline.strip(),
        )
    return found


def process_tree(root: int, processes: dict[int, ProcessInfo] | None = None) -> dict[int, ProcessInfo]:
    """``root`` and all its descendants that are running now (or among ``processes``)."""
    processes = running_processes() if processes is None else processes
    tree = {root: processes[root]} if root in processes else {}
    grew = True
    while grew:
        grew = False
        for info in processes.values():
            if info.ppid in tree and info.pid not in tree:
                tree[info.pid] = info
                grew = True
    return tree


def still_running(tree: dict[int, ProcessInfo]) -> list[int]:
    now = running_processes()
    return [pid for pid, info in tree.items() if pid in now and now[pid].started == info.started]


def _kill(tree: dict[int, ProcessInfo]) -> None:
    """SIGKILL what of ``tree`` still runs, all stopped first so no granian master respawns a worker."""
    alive = still_running(tree)
    for signum in (signal.SIGSTOP, signal.SIGKILL):
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signum)


@dataclass
class ServerProcess:
    """The memory server started exactly as ``make run`` starts it, configured by environment only."""

    database: ProvisionedDatabase | None  # None: no DATABASE_URL at all (the default under var/)
    var_dir: Path
    redis_url: str | None = None
    port: int = field(default_factory=free_port)
    extra_env: dict[str, str] = field(default_factory=dict)
    q_name: str = field(default_factory=lambda: f"nekomem-e2e-{uuid.uuid4().hex[:10]}")
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def log_path(self) -> Path:
        return self.var_dir / "server.log"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED_ENV}
        env.update(
            DJANGO_SETTINGS_MODULE="nekomem.settings",
            NEKOMEM_VAR_DIR=str(self.var_dir),
            NEKOMEM_HOST="127.0.0.1",
            NEKOMEM_PORT=str(self.port),
            NEKOMEM_Q_NAME=self.q_name,
            PYTHONUNBUFFERED="1",
        )
        if self.database is not None:
            env["DATABASE_URL"] = self.database.url
        if self.redis_url:
            env["REDIS_URL"] = self.redis_url
        env.update(self.extra_env)
        return env

    def manage(self, *args: str, timeout: float = 180.0) -> str:
        """Run one ``manage.py`` command to completion; its output goes to the log too."""
        return self._run([sys.executable, "manage.py", *args], timeout=timeout)

    def _run(self, command: list[str], *, timeout: float) -> str:
        self.var_dir.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            command,
            cwd=REPO_ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        with self.log_path.open("a") as log:
            log.write(f"$ {shlex.join(command[1:])}\n{done.stdout}{done.stderr}")
        if done.returncode != 0:
            raise RuntimeError(f"{shlex.join(command[1:])} failed ({done.returncode}):\n{self.log_tail()}")
        return done.stdout

    def start(self, *, ready_timeout: float = 60.0, wait_ready: bool = True) -> None:
        """Run the Makefile's ``run`` recipe: its set-up commands, then ``serve`` in the background
        (and wait until it answers, unless told not to)."""
        if self.process is not None and self.process.poll() is None:
            raise RuntimeError("server already running")
        *setup, serve = make_run_commands()
        for command in setup:
            self._run(command, timeout=180)
        log = self.log_path.open("ab")
        try:
            self.process = subprocess.Popen(
                serve,
                cwd=REPO_ROOT,
                env=self.env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: HTTP server, workers and qcluster
            )
        finally:
            log.close()
        self.starts += 1
        if wait_ready:
            self.wait_ready(timeout=ready_timeout)

    def wait_ready(self, *, timeout: float) -> None:
        """Poll ``/health`` until a worker answers outside restricted mode."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}:\n{self.log_tail()}")
            with contextlib.suppress(OSError, http.client.HTTPException, ValueError):
                health = http_call(self.port, "GET", "/health", timeout=2)
                if health.status == 200 and health.json().get("limited_mode") is False:
                    return
            time.sleep(0.1)
        raise RuntimeError(f"server not ready after {timeout:.0f} s:\n{self.log_tail()}")

    @property
    def http_workers(self) -> int:
        """How many HTTP worker processes ``serve`` starts with this environment."""
        return int(self.env().get("NEKOMEM_WORKERS", "2"))

    def wait_warm(self, *, timeout: float) -> None:
        """Wait until every HTTP worker logged that its start-up warm-ups are done (this start's)."""
        workers = self.http_workers
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            log = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
            this_start = log.rsplit("memory server on http://", 1)[-1]
            if this_start.count("warm-ups done in") >= workers:
                return
            time.sleep(0.2)
        raise RuntimeError(f"warm-ups not done after {timeout:.0f} s:\n{self.log_tail()}")

    def processes(self) -> dict[int, ProcessInfo]:
        """``serve`` and every process under it: granian's master and workers, the cluster's."""
        return process_tree(self.process.pid) if self.process is not None else {}

    def kill(self) -> None:
        """SIGKILL the whole tree at once: no worker gets to finish anything."""
        tree = self.processes()
        _kill(tree)
        self._reap(tree, timeout=10)

    def interrupt(self) -> float:
        """A terminal's Ctrl-C: SIGINT to the foreground process group, which is ``serve``'s.

        Returns the seconds until the whole tree had exited (SIGKILL after 60 s).
        """
        assert self.process is not None
        tree = self.processes()
        started = time.monotonic()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGINT)
        self._reap(tree, timeout=60)
        took = time.monotonic() - started
        _kill(tree)
        self._reap(tree, timeout=10)
        return took

    def stop(self) -> None:
        """A supervisor's stop (SIGTERM to ``serve``, which stops both children); SIGKILL what is left."""
        if self.process is None:
            return
        tree = self.processes()
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=30)
        _kill(tree)
        self._reap(tree, timeout=10)

    def _reap(self, tree: dict[int, ProcessInfo], *, timeout: float) -> None:
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=timeout)
        # Grandchildren are reaped by their new parent; wait (bounded) until all of them are gone.
        deadline = time.monotonic() + timeout
        while still_running(tree) and time.monotonic() < deadline:
            time.sleep(0.05)

    def log_tail(self, lines: int = 60) -> str:
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


@contextlib.contextmanager
def server_backend(
    tmp_dir: Path, *, postgres_url: str | None, redis_base_url: str | None
) -> Iterator[ServerProcess]:
    """A not-yet-started server on a fresh database (and queue); everything is removed afterwards."""
    database = provision_database(tmp_dir, postgres_url=postgres_url)
    redis_url = e2e_redis_url(redis_base_url) if redis_base_url else None
    server = ServerProcess(database=database, var_dir=tmp_dir / "var", redis_url=redis_url)
    try:
        yield server
    finally:
        try:
            server.stop()
        finally:
            if redis_url:
                redis_queue_cleanup(redis_url, server.q_name)
            database.drop()


@contextlib.contextmanager
def server_started(
    tmp_dir: Path, *, env: Mapping[str, str] | None = None, memory: Mapping[str, Path] | None = None
) -> Iterator[ServerProcess]:
    """A started server on a fresh database of this run's kind (SQLite, or PostgreSQL and Redis under
    ``DATABASE_URL`` / ``REDIS_URL``), removed afterwards. ``env`` goes to the server; ``memory`` maps a
    character's name to an original-layout folder, imported once the server is up."""
    with server_backend(
        tmp_dir, postgres_url=postgres_base_url(), redis_base_url=os.environ.get("REDIS_URL") or None
    ) as server:
        server.extra_env.update(env or {})
        server.start()
        if memory:
            root = tmp_dir / "memory-import"
            for character, layout in memory.items():
                shutil.copytree(layout, root / character)
            server.manage("import_memory", str(root))
        yield server


@contextlib.contextmanager
def two_servers_one_database(
    tmp_dir: Path, *, env: dict[str, str]
) -> Iterator[tuple[ServerProcess, ServerProcess]]:
    """Two started servers on one fresh database of this run's kind and one task queue, as the servers
    of a deployment share them; ``env`` goes to both."""
    with server_started(tmp_dir / "a", env=env) as server_a:
        server_b = ServerProcess(
            database=server_a.database,
            var_dir=tmp_dir / "b" / "var",
            redis_url=server_a.redis_url,
            q_name=server_a.q_name,
            extra_env=dict(env),
        )
        try:
            server_b.start()
            yield server_a, server_b
        finally:
            server_b.stop()
