"""Django on a scratch database for in-process benchmarks (not the server's own ``var/`` database)."""

from __future__ import annotations

import os
from pathlib import Path


def django_on_scratch_database(work: Path) -> None:
    """Point Django at a fresh SQLite file under ``work`` (or ``NEKOMEM_BENCH_DATABASE_URL``), migrate."""
    os.environ["DATABASE_URL"] = os.environ.get(
        "NEKOMEM_BENCH_DATABASE_URL", f"sqlite:///{work / 'bench.sqlite3'}"
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nekomem.settings")
    os.environ.setdefault("NEKOMEM_LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
