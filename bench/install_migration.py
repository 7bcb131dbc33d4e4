"""The first start in an install folder (``install/migration.py``): every character taken in once.

    flock /tmp/nekomem-bench.lock .venv/bin/python bench/install_migration.py [--characters 10]
        [--facts 10000] [--raw 20000]

Generates ``memory/<name>/`` for each character in the original's shapes (``facts.json`` and
``facts_archive.json`` as ``bench/import_facts.py`` writes them, and a ``time_indexed.db`` of ``--raw``
messages), then times ``install_migration_run`` on a fresh database (SQLite unless
``NEKOMEM_BENCH_DATABASE_URL``) and a second run (nothing to take in: the second start).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.import_facts import NAME, generate
from bench.scratch import django_on_scratch_database


def raw_log(path: Path, rows: int) -> None:
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE time_indexed_original (id INTEGER PRIMARY KEY, session_id TEXT, message TEXT,"
        " timestamp DATETIME)"
    )
    start = datetime(2024, 1, 1, 9, 0, 0)
    db.executemany(
        "INSERT INTO time_indexed_original (session_id, message, timestamp) VALUES (?, ?, ?)",
        (
            (
                f"session-{i // 2:08d}",
                json.dumps(
                    {"type": ("human", "ai")[i % 2], "data": {"content": f"第{i}句：今天的天气不错"}},
                    ensure_ascii=False,
                ),
                (start + timedelta(seconds=30 * (i // 2))).strftime("%Y-%m-%d %H:%M:%S.%f"),
            )
            for i in range(rows)
        ),
    )
    db.commit()
    db.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--characters", type=int, default=10)
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--raw", type=int, default=20_000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nekomem-install-migration-bench-"))
    django_on_scratch_database(work)
    from django.conf import settings
    from django.db import connection

    from facts.models import Fact
    from install.migration import install_migration_begin, install_migration_run
    from nekomem.runtime.startup import startup_run
    from recent.models import RawMessage

    assert startup_run()
    root = work / "N.E.K.O"
    memory = root / "memory"
    began = time.perf_counter()
    for index in range(args.characters):
        generate(memory / f"gen{index}", args.facts)
        folder = memory / f"gen{index}" / NAME
        target = memory / f"猫娘{index}"
        folder.rename(target)
        (memory / f"gen{index}").rmdir()
        raw_log(target / "time_indexed.db", args.raw)
    generated = time.perf_counter() - began
    settings.NEKOMEM_NEKO_ROOT = root
    assert install_migration_begin()
    began = time.perf_counter()
    reports = install_migration_run()
    first = time.perf_counter() - began
    began = time.perf_counter()
    install_migration_run()
    second = time.perf_counter() - began
    facts, raw = Fact.objects.count(), RawMessage.objects.count()
    print(
        f"\nfirst-start migration, database: {connection.vendor}; {args.characters} characters × "
        f"{args.facts} facts + {args.raw} raw messages (generated in {generated:.1f} s)"
    )
    print("| run | seconds | characters | facts stored | raw rows stored |")
    print("|-----|---------|------------|--------------|-----------------|")
    print(f"| first start | {first:.1f} | {len(reports)} | {facts} | {raw} |")
    print(f"| second start (nothing to take in) | {second:.2f} | {len(reports)} | {facts} | {raw} |")


if __name__ == "__main__":
    main()
