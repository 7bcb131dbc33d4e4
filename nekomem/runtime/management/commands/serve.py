"""Run the memory server (granian, WSGI) and a django-q2 cluster together; Ctrl-C stops both."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand

STOP_GRACE_SECONDS = 20
CLUSTER_NICENESS = 10


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
        "--log-level",
        "warning",
        "nekomem.wsgi:application",
    ]


class Command(BaseCommand):
    help = "Serve the memory API under granian together with a django-q2 cluster."

    def add_arguments(self, parser):
        parser.add_argument("--no-cluster", action="store_true", help="do not start the django-q2 cluster")

    def handle(self, *args, **options):
        python = sys.executable
        children = [subprocess.Popen(http_server_command(python), cwd=settings.BASE_DIR)]
        if not options["no_cluster"]:
            children.append(
                subprocess.Popen(
                    [python, "manage.py", "qcluster"],
                    cwd=settings.BASE_DIR,
                    # Background maintenance (outbox steps, extraction, embeddings) yields the CPU to
                    # the chat's requests: it only has to keep up, a request has someone waiting.
                    preexec_fn=lambda: os.nice(CLUSTER_NICENESS),
                )
            )
        self.stdout.write(f"memory server on http://{settings.NEKOMEM_HOST}:{settings.NEKOMEM_PORT}")

        stopping = False

        def stop(signum, frame):
            nonlocal stopping
            stopping = True
            for child in children:
                if child.poll() is None:
                    child.send_signal(signal.SIGTERM)

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            while not stopping and all(child.poll() is None for child in children):
                time.sleep(0.5)
        finally:
            stop(signal.SIGTERM, None)
            deadline = time.monotonic() + STOP_GRACE_SECONDS + 2
            for child in children:
                try:
                    child.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    child.kill()
        codes = [child.returncode for child in children]
        if any(code not in (0, -signal.SIGTERM, None) for code in codes) and not stopping:
            os._exit(1)
