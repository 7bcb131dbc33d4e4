"""What the install's live file views cost per layer (``install/writing.py``), by facts held.

    flock /tmp/nekomem-bench.lock .venv/bin/python bench/install_views.py [--sizes 1000,10000,100000]

For each size: a character with that many facts (80 % live, 20 % archived) and 2 000 raw turns is
imported from a generated folder into a fresh database (SQLite unless ``NEKOMEM_BENCH_DATABASE_URL``),
its install folder is written once whole (the first write), then the writer's pass is timed after
each kind of change: a turn (recent window + raw log: the raw log is appended, the facts skipped by
their stamp), one fact added (``facts.json`` rewritten), and a pass with nothing changed. Prints one
table of milliseconds per file written, and the pass's total.

``/cache`` p95 with the views on against off is ``bench/cache_throughput.py`` run twice (see the
README's "The memory folder in install mode"): ``--env NEKOMEM_NEKO_ROOT=<empty folder>`` or not.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.import_facts import NAME, generate
from bench.scratch import django_on_scratch_database

RAW_TURNS = 2000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    work = Path(tempfile.mkdtemp(prefix="nekomem-install-views-bench-"))
    django_on_scratch_database(work)
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from facts.models import Fact
    from install.take_in import install_folder_reread
    from install.writing import FileWritten, folder_write_views
    from nekomem.characters.models import Character
    from nekomem.characters.services import character_memory_changed
    from nekomem.runtime.startup import startup_run
    from recent.services.turns import turn_record

    assert startup_run()  # the writer writes nothing while this process is not ready

    table: dict[str, dict[tuple[int, str], float]] = defaultdict(dict)
    steps = ("first write", "after a turn", "after one fact", "nothing changed")
    for size in sizes:
        root = work / f"install-{size}"
        generate(root / "memory", size)
        settings.NEKOMEM_NEKO_ROOT = root
        Character.objects.filter(name=NAME).delete()
        call_command("import_memory", str(root / "memory"), stdout=io.StringIO())
        character = Character.objects.get(name=NAME)
        for i in range(RAW_TURNS // 100):
            turn_record(
                name=NAME,
                messages=[
                    {"type": "human", "data": {"content": f"第{i}轮：今天下雨了"}},
                    {"type": "ai", "data": {"content": "记得带伞哦"}},
                ]
                * 50,
                language="zh",
            )
        install_folder_reread()  # the generated files count as taken in

        def timed_pass(step: str, size: int = size) -> None:
            started = time.perf_counter()
            written = folder_write_views()
            total = time.perf_counter() - started
            files: list[FileWritten] = written.get(NAME, [])
            for f in files:
                table[f.filename + (" (appended)" if f.appended else "")][(size, step)] = 1000 * f.seconds
            table["whole pass"][(size, step)] = 1000 * total

        (root / "memory" / NAME / "facts.json").unlink()  # the first write writes every file
        (root / "memory" / NAME / "facts_archive.json").unlink()
        timed_pass("first write")
        turn_record(
            name=NAME,
            messages=[
                {"type": "human", "data": {"content": "晚上吃什么"}},
                {"type": "ai", "data": {"content": "咖喱饭！"}},
            ],
            language="zh",
        )
        timed_pass("after a turn")
        Fact.objects.create(
            character=character,
            fact_id=f"fact_{timezone.now():%Y%m%d%H%M%S}_bench0001",
            text="阿凛今天学会了做咖喱饭",
            hash="bench0001bench00",
            entity="master",
            importance=6,
            created_at=timezone.now(),
            event_start_at=timezone.now(),
        )
        character_memory_changed(character_id=character.pk)  # as every service that writes a fact does
        timed_pass("after one fact")
        timed_pass("nothing changed")
        print(f"{size} facts: done", file=sys.stderr)

    print(f"\ninstall folder views, database: {connection.vendor}; ms per file written (— not written)")
    header = ["file", *(f"{size // 1000}k {step}" for size in sizes for step in steps)]
    rows = [header]
    for filename, cells in sorted(table.items(), key=lambda item: (item[0] == "whole pass", item[0])):
        rows.append(
            [filename, *(f"{cells[(s, st)]:.0f}" if (s, st) in cells else "—" for s in sizes for st in steps)]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for i, row in enumerate(rows):
        print("| " + " | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) + " |")
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print(json.dumps({"work": str(work)}))


if __name__ == "__main__":
    main()
