"""Import/export speed of a generated NEKO directory with many facts.

    flock /tmp/nekomem-bench.lock .venv/bin/python bench/import_facts.py [--facts 100000] [--keep DIR]

Writes ``ROOT/<name>/facts.json`` (80 %) and ``facts_archive.json`` (20 %) in the original shapes,
then times ``import_memory`` (fresh), ``import_memory`` again (idempotent: nothing changes) and
``export_memory``. The database is a fresh SQLite file in a temporary directory unless
``NEKOMEM_BENCH_DATABASE_URL`` names another (e.g. a scratch PostgreSQL database).

Then what an import costs the recall index of a server (this process plays the server: its index
cache starts empty, as a worker that did not run the import): the first query after the large import
(the import saved its index, so the server loads it; "in full" means it answered with results, not
"its recall index is being built"), the same after a change without detail (what every import cost
before), and the three queries after ``import_memory`` of one new fact run as another process.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import subprocess
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


ONE_FACT = "阿凛下个月要去札幌看雪祭"


def one_fact_directory(root: Path) -> None:
    created = datetime(2026, 1, 1, 9, 0, 0)
    digest = hashlib.sha256(ONE_FACT.encode()).hexdigest()[:16]
    fact = {
        "id": f"fact_{created:%Y%m%d%H%M%S}_{digest[:8]}",
        "text": ONE_FACT,
        "importance": 7,
        "entity": "master",
        "source": "user_observation",
        "tags": [],
        "hash": digest,
        "created_at": created.isoformat(),
        "event_when_raw": None,
        "event_start_at": created.isoformat(),
        "event_end_at": None,
        "schema_version": 2,
        "absorbed": False,
        "signal_processed": True,
    }
    folder = root / NAME
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "facts.json").write_text(json.dumps([fact], ensure_ascii=False), encoding="utf-8")


def timed_query(query: str) -> tuple[float, dict]:
    from recall.index_cache import RecallIndexBuilding
    from recall.services import RecallRequest, recall_query

    began = time.perf_counter()
    try:
        body = recall_query(name=NAME, request=RecallRequest(query=query))
    except RecallIndexBuilding:  # what /query_memory answers as no results
        body = {"results": [], "error_code": "recall_index_building"}
    return (time.perf_counter() - began) * 1000, body


def answered(body: dict, text: str | None = None) -> str:
    if body.get("error_code"):
        return f"no ({body['error_code']})"
    texts = [row["text"] for row in body["results"]]
    if text is not None:
        return "yes, new fact found" if text in texts else "yes, new fact NOT found"
    return f"yes ({len(texts)} results)" if texts else "no results"


def recall_rows(work: Path) -> list[tuple[str, float, str]]:
    """The server's side of an import: first queries after it, in ms."""
    from nekomem.characters.models import Character
    from nekomem.characters.services import character_memory_changed
    from nekomem.embeddings import get_embedder
    from recall import index_cache

    get_embedder()  # a serving worker has its model loaded
    rows: list[tuple[str, float, str]] = []
    index_cache.clear()  # a server process that did not run the import
    ms, body = timed_query("阿凛喜欢京都")
    rows.append(("large import: 1st query", ms, answered(body)))
    ms, body = timed_query("阿凛想去吉他")
    rows.append(("large import: 2nd query", ms, answered(body)))

    # What every import cost before it logged its rows: one change without detail.
    character = Character.objects.get(name=NAME)
    character_memory_changed(character_id=character.pk)
    ms, body = timed_query("阿凛喜欢京都")
    rows.append(("no-detail change: 1st query", ms, answered(body)))
    index_cache.clear()
    ms, body = timed_query("阿凛喜欢京都")  # let the rebuild finish (answers meanwhile come from the rows)
    while body.get("error_code") or body.get("index_building"):
        time.sleep(0.5)
        ms, body = timed_query("阿凛喜欢京都")

    one_fact_directory(work / "one")
    command = [sys.executable, "manage.py", "import_memory", str(work / "one"), "--character", NAME]
    began = time.perf_counter()
    subprocess.run(command, cwd=Path(__file__).resolve().parent.parent, check=True, capture_output=True)
    rows.append(
        ("1-fact import (process)", (time.perf_counter() - began) * 1000, "import_memory, another process")
    )
    for i in range(3):
        ms, body = timed_query("阿凛去札幌看雪祭")
        rows.append((f"1-fact import: query {i + 1}", ms, answered(body, ONE_FACT)))
    return rows


def index_beside_answers() -> list[tuple[str, str, str]]:
    """Right after the import returned: the index built as the task cluster builds it (on a thread of
    this process, which plays both), and a query every 0.2 s meanwhile, as a server would answer it
    (from the rows holding its words until the index is there): how long until the index answers, and
    what the answers meanwhile cost and held."""
    import statistics
    import threading

    from nekomem.characters.models import Character
    from nekomem.embeddings import get_embedder
    from recall import index_cache

    get_embedder()
    index_cache.clear()  # the server did not run the import
    character = Character.objects.get(name=NAME)
    began = time.perf_counter()
    built: list[float] = []

    def build() -> None:
        index_cache.recall_indexes_build([character.pk])
        built.append(time.perf_counter() - began)

    builder = threading.Thread(target=build, name="bench-index-build")
    builder.start()
    interim: list[float] = []
    empty = 0
    while True:
        ms, body = timed_query("阿凛喜欢京都")
        if not body.get("index_building") and not body.get("error_code"):
            break
        interim.append(ms)
        empty += not body["results"]
        time.sleep(0.2)
    ready = time.perf_counter() - began
    builder.join()
    meanwhile = (
        f"p50 {statistics.median(interim):.0f} / max {max(interim):.0f} ms" if interim else "none needed"
    )
    return [
        ("index built (the cluster's task)", f"{built[0]:.1f} s", "recall_indexes_build, beside the answers"),
        ("index answering after", f"{ready:.1f} s", "from the import's return"),
        (f"answers meanwhile ({len(interim)})", meanwhile, f"{empty} without results (target 0)"),
    ]


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
    # The import (in this process, and as another process) and this process share the saved indexes.
    os.environ["NEKOMEM_RECALL_SNAPSHOT_DIR"] = str(work / "recall-index")
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
    build_rows = index_beside_answers()
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
    print()
    print(f"| {'after the import returned':<40} | {'value':>12} | note")
    print(f"|{'-' * 42}|{'-' * 14}|------")
    for label, value, note in build_rows:
        print(f"| {label:<40} | {value:>12} | {note}")
    print()
    print(f"| {'recall after an import':<28} | {'ms':>8} | answered")
    print(f"|{'-' * 30}|{'-' * 10}|---------")
    for label, ms, note in recall_rows(work):
        print(f"| {label:<28} | {ms:8.1f} | {note}")


if __name__ == "__main__":
    main()
