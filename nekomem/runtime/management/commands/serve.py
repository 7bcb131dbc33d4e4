"""Run the memory server (granian, WSGI) and a django-q2 cluster together; Ctrl-C stops both."""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import socket
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from nekomem.runtime.startup import server_hooks
from nekomem.runtime.status import llm_startup_log

STOP_GRACE_SECONDS = 20
# Granian's graceful stop sometimes deadlocks in a worker (emmett-framework/granian#875: the runtime's
# drop waits for a thread that waits for the GIL) and then sits out the whole grace with nothing to
# finish. Once no connection to the port has been open for this long, nothing can be lost by
# killing it.
IDLE_STOP_SECONDS = 2.0
# The cluster's workers finish their task before they exit, however long it runs (an embedding
# backfill, an LLM call of up to two minutes). Nobody waits for a background task and every one is
# re-delivered, so after this grace the task is interrupted.
CLUSTER_STOP_GRACE_SECONDS = 3
# Not SCHED_IDLE as well, although that gave way to a waking request at once (PostgreSQL mixed load:
# query p95 37-39 against 43-44 ms): the cluster holds the settle lock and row locks, and an idle-class
# holder gets almost no CPU while the cores are busy, so a request waiting for its lock would wait
# until the load drops. Only the backfill's model threads, which hold none, run idle.
CLUSTER_NICENESS = 10
# Ctrl-C, a supervisor's stop, and the terminal closing.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
PR_SET_PDEATHSIG = 1  # prctl(2)

logger = logging.getLogger(__name__)


def http_server_command(python: str) -> list[str]:
    """granian serving ``nekomem.wsgi``: worker processes with a pool of threads each for the views.

    Each worker runs the startup work (reconcile) as it loads the application, before its first
    request (see ``nekomem/wsgi.py``).
    """
    return [
        python,
        "-m",
        "granian",
        "--interface",
        "wsgi",
        "--http",
        "1",
        "--no-ws",
        "--host",
        settings.NEKOMEM_HOST,
        "--port",
        str(settings.NEKOMEM_PORT),
        "--workers",
        str(settings.NEKOMEM_WORKERS),
        "--blocking-threads",
        str(settings.NEKOMEM_THREADS),
        # Each view thread keeps its own database connection; keep threads (and so connections)
        # across quiet spells instead of reconnecting after granian's default 30 s.
        "--blocking-threads-idle-timeout",
        "600",
        "--respawn-failed-workers",
        # A stop lets requests in flight finish for as long as `serve` waits for its children.
        "--workers-kill-timeout",
        str(STOP_GRACE_SECONDS),
        # The admin's and the API docs' files, gathered by `collectstatic` (the run recipe), are served
        # by granian itself, without a trip through Django.
        "--static-path-route",
        "/" + settings.STATIC_URL.strip("/"),
        "--static-path-mount",
        str(settings.STATIC_ROOT),
        "--log-level",
        "warning",
        "nekomem.wsgi:application",
    ]


def _start_child(command: list[str], *, niceness: int = 0) -> subprocess.Popen[bytes]:
    """Start a child in a process group of its own that is told to stop if ``serve`` dies.

    A terminal's Ctrl-C (and its hang-up) goes to the whole foreground process group. Had the children
    shared ``serve``'s group, granian's workers would get the terminal's SIGINT and then their master's
    SIGTERM a moment later; that pair left a worker deadlocked in granian's shutdown until the kill
    timeout (seen in about one stop in three). In a group of their own they get one signal, from
    ``serve``, and the parent-death signal stops them should ``serve`` itself be killed.
    """

    def in_child() -> None:
        if niceness:
            os.nice(niceness)
        if sys.platform.startswith("linux"):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)

    return subprocess.Popen(
        command,
        cwd=settings.BASE_DIR,
        stdin=subprocess.DEVNULL,
        process_group=0,
        preexec_fn=in_child,
    )


def port_in_use(host: str, port: int) -> bool:
    """Whether something already listens on ``host:port`` (a socket in TIME_WAIT does not count)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


# /proc/net/tcp states of a connection whose request may still be answered: ESTABLISHED, CLOSE_WAIT.
_OPEN_TCP_STATES = frozenset({"01", "08"})


def open_connections(port: int) -> int | None:
    """How many TCP connections to local ``port`` are open; None where /proc cannot tell (not Linux)."""
    count, readable = 0, False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as rows:
                next(rows, None)  # the header
                readable = True
                for row in rows:
                    fields = row.split()
                    if (
                        len(fields) > 3
                        and fields[3] in _OPEN_TCP_STATES
                        and int(fields[1].rsplit(":", 1)[1], 16) == port
                    ):
                        count += 1
        except OSError:
            continue
    return count if readable else None


def _wait_http_server(child: subprocess.Popen[bytes], *, deadline: float, port: int) -> None:
    """Wait for the HTTP server to stop, for as long as a connection to it is open, up to ``deadline``."""
    idle_since: float | None = None
    while child.poll() is None and time.monotonic() < deadline:
        now = time.monotonic()
        if open_connections(port) == 0:
            idle_since = idle_since or now
            if now - idle_since >= IDLE_STOP_SECONDS:
                logger.warning(
                    "the HTTP server is still stopping %.1f s after its last connection closed; killing it",
                    IDLE_STOP_SECONDS,
                )
                return
        else:
            idle_since = None
        time.sleep(0.1)


def _stop_children(children: list[subprocess.Popen[bytes]], *, graces: list[int], http_port: int) -> None:
    """TERM each child once, give each its grace, then KILL whatever is left of its process group.

    The first child is the HTTP server: its grace ends early once no connection is left open.
    Killing the group, not just the child, matters: the cluster's worker processes are the child's
    children, and killed alone the child would leave them running their task, orphaned.
    """
    for child in children:  # once each: a repeated signal is what hangs granian's shutdown
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
    started = time.monotonic()
    for position, (child, grace) in enumerate(zip(children, graces, strict=True)):
        if position == 0:
            _wait_http_server(child, deadline=started + grace, port=http_port)
        else:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=max(0.1, started + grace - time.monotonic()))
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signal.SIGKILL)  # its own group (process_group=0 at start)
        child.wait()


class Command(BaseCommand):
    help = "Serve the memory API under granian together with a django-q2 cluster."

    def add_arguments(self, parser):
        parser.add_argument("--no-cluster", action="store_true", help="do not start the django-q2 cluster")

    def handle(self, *args, **options):
        host, port = settings.NEKOMEM_HOST, settings.NEKOMEM_PORT
        if port_in_use(host, port):
            # Before anything starts: granian would die on it with a long traceback, the cluster with it.
            raise CommandError(
                f"{host}:{port} is already in use, perhaps by another nekomem; stop it or set NEKOMEM_PORT"
            )
        python = sys.executable
        # The apps' work of this process (install mode: a first start answers 409 until the install's
        # memory folder is taken in, before any child can serve; the folder is kept in step meanwhile).
        hooks = server_hooks()
        for hook in hooks:
            if hook.before_serving is None:
                continue
            try:
                hook.before_serving()
            except DatabaseError:
                # The schema is not there yet (`serve` without `prepare`): the server's own start-up says so.
                logger.exception("%s: cannot be set up before serving", hook.name)
        # Both children inherit numpy's single-threaded setting from manage.py, which set it before
        # numpy loaded (nekomem/runtime/native_threads.py).
        children = [_start_child(http_server_command(python))]
        if not options["no_cluster"]:
            # Background maintenance (outbox steps, extraction, embeddings) yields the CPU to the
            # chat's requests: it only has to keep up, a request has someone waiting.
            children.append(_start_child([python, "manage.py", "qcluster"], niceness=CLUSTER_NICENESS))
        self.stdout.write(f"memory server on http://{settings.NEKOMEM_HOST}:{settings.NEKOMEM_PORT}")
        # Once per server, not per worker: which tiers have a provider, or that LLM work will wait.
        llm_startup_log()
        loops = [hook.background() for hook in hooks if hook.background is not None]

        stop_requested = False

        def request_stop(signum, frame):
            nonlocal stop_requested
            stop_requested = True

        for signum in STOP_SIGNALS:
            signal.signal(signum, request_stop)
        try:
            while not stop_requested and all(child.poll() is None for child in children):
                time.sleep(0.2)
        finally:
            for stop in loops:
                if stop is not None:
                    stop.set()
            _stop_children(
                children,
                graces=[STOP_GRACE_SECONDS, CLUSTER_STOP_GRACE_SECONDS][: len(children)],
                http_port=port,
            )
        codes = [child.returncode for child in children]
        if any(code not in (0, -signal.SIGTERM, None) for code in codes) and not stop_requested:
            os._exit(1)
