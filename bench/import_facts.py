"""Import/export speed of a generated NEKO directory with many facts.

    flock /tmp/nekomem-bench.lock .venv/bin/python bench/import_facts.py [--facts 100000] [--keep DIR]

Writes ``ROOT/<name>/facts.json`` (80 %) and ``facts_archive.json`` (20 %) in the original shapes,
then times ``import_memory`` (fresh), ``import_memory`` again (idempotent: nothing changes) and
``export_memory``. The database is a fresh SQLite file in a temporary directory unless
``NEKOMEM_BENCH_DATABASE_URL`` names another (e.g. a scratch PostgreSQL database).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.scratch import django_on_scratch_database

NAME = "bench_cat"
TOPICS = ["喜欢", "讨厌", "去过", "想去", "养了", "学会了", "loves", "visited", "plays", "fears"]
THINGS = ["猫", "草莓蛋糕", "京都", "吉他", "日语", "green tea", "Osaka", "chess", "thunder", "rain"]


def generate(root: Path, count: int) -> None:
    start = datetime(2023, 1, 1, 8, 0, 0)
    facts = []
    for i in range(count):
        text = f"阿凛{TOPICS[i % 10]}{THINGS[(i // 10) % 10]}（第{i}条）"
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        created = start + timedelta(minutes=i)
        facts.append(
            {
                "id": f"fact_{created:%Y%m%d%H%M%S}_{digest[:8]}",
                "text": text,
                "importance": 1 + i % 10,
                "entity": ("master", "neko", "relationship")[i % 3],
                "source": "user_observation",
                "tags": [],
                "hash": digest,
                "created_at": created.isoformat(),
                "event_when_raw": None,
                "event_start_at": created.isoformat(),
                "event_end_at": None,
                "schema_version": 2,
                "absorbed": i % 5 == 0,
                "signal_processed": True,
            }
        )
    folder = root / NAME
    folder.mkdir(parents=True, exist_ok=True)
    cut = count * 4 // 5
    (folder / "facts.json").write_text(json.dumps(facts[:cut], ensure_ascii=False), encoding="utf-8")
    (folder / "facts_archive.json").write_text(json.dumps(facts[cut:], ensure_ascii=False), encoding="utf-8")


def timed(label: str, rows: list[tuple[str, float, str]], fn, note: str = "") -> None:
    began = time.perf_counter()
    fn()
    rows.append((label, time.perf_counter() - began, note))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--keep", type=Path)
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="nekomem-import-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    django_on_scratch_database(work)
    from django.core.management import call_command
    from django.db import connection

    from facts.models import Fact

    rows: list[tuple[str, float, str]] = []
    timed("generate directory", rows, lambda: generate(work / "in", args.facts), f"{args.facts} facts")
    quiet = io.StringIO()
    timed(
        "import_memory (fresh)", rows, lambda: call_command("import_memory", str(work / "in"), stdout=quiet)
    )
    stored = Fact.objects.filter(character__name=NAME).count()
    timed(
        "import_memory (again)", rows, lambda: call_command("import_memory", str(work / "in"), stdout=quiet)
    )
    unchanged = Fact.objects.filter(character__name=NAME).count() == stored
    timed("export_memory", rows, lambda: call_command("export_memory", str(work / "out"), stdout=quiet))
    same = json.loads((work / "out" / NAME / "facts.json").read_text()) == json.loads(
        (work / "in" / NAME / "facts.json").read_text()
    )
    print(
        f"database: {connection.vendor}; facts stored: {stored}; re-import unchanged: {unchanged}; "
        f"export equals input: {same}"
    )
    print(f"| {'step':<24} | {'seconds':>8} | {'facts/s':>9} | note")
    print(f"|{'-' * 26}|{'-' * 10}|{'-' * 11}|------")
    for label, seconds, note in rows:
        print(f"| {label:<24} | {seconds:8.2f} | {args.facts / seconds:9.0f} | {note}")


if __name__ == "__main__":
    main()
