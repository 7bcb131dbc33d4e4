"""Run the memory server (gunicorn) and a django-q2 cluster together; Ctrl-C stops both."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Serve the memory API under gunicorn together with a django-q2 cluster."

    def add_arguments(self, parser):
        parser.add_argument("--no-cluster", action="store_true", help="do not start the django-q2 cluster")

    def handle(self, *args, **options):
        python = sys.executable
        children = [
            subprocess.Popen(
                [python, "-m", "gunicorn", "nekomem.wsgi:application", "-c", "python:nekomem.gunicorn_conf"]
            )
        ]
        if not options["no_cluster"]:
            children.append(subprocess.Popen([python, "manage.py", "qcluster"], cwd=settings.BASE_DIR))
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
            deadline = time.monotonic() + 20
            for child in children:
                try:
                    child.wait(timeout=max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    child.kill()
        codes = [child.returncode for child in children]
        if any(code not in (0, -signal.SIGTERM, None) for code in codes) and not stopping:
            os._exit(1)
