"""Recall through the path a user takes: original memory folders imported into a running server (issue 50).

    .venv/bin/python bench/recall_served.py [--sets ...] [--vector-minutes 10]

For each development set (``shared_data``), each conversation becomes one character as an original
memory folder carries it (``bench/original_folder.py``: ``facts.json`` as the original writes it, every
fact about ``master``; the raw log; ``recent.json``). A server is started as ``make run`` starts it on a
fresh SQLite database (one server a set: at most five characters, within the eight slots), the folders
are imported with ``manage.py import_memory`` while it runs, and the bench waits for the cluster's
embedding backfill to give every fact its vector, asking nothing meanwhile. Then every probe is asked
over HTTP ``POST /query_memory`` (default configuration), twice:

- **first pass**: each character's first query is its first answer after the import (reported apart);
- **warm pass**: the same probes again;
- **after each of ``--restarts`` restarts**: each character's next probe asked first (its first query after
  a start, the index loaded from the saved snapshot), compared with the same probe's warm answer.

recall@8 as in ``bench/recall_eval.py``. On this shared machine the waits are noisy; recall is not.
``--write-results`` puts the table into ``docs/recall-results.md`` (its own section, commit, date, command).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench import original_folder, recall_misses, shared_data  # noqa: E402
from tests.support.server_process import ServerProcess, http_call, provision_database  # noqa: E402


def ask(server: ServerProcess, name: str, probe: dict, id_map: dict[str, str]) -> float:
    answer = http_call(
        server.port, "POST", f"/query_memory/{name}", {"query": probe["question"]}, timeout=300
    )
    body = answer.json()
    if answer.status != 200 or "error_code" in body:
        raise RuntimeError(f"/query_memory/{name}: {answer.status} {body}")
    evidence = set(probe["evidence_turn_ids"])
    got = {original_folder.turn_of(r, id_map) for r in body["results"]}
    return len(evidence & got) / len(evidence)


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def run_set(set_name: str, work: Path, vector_minutes: float, restarts: int) -> dict[str, object]:
    root = work / "import" / set_name
    id_maps, probes = original_folder.write_original_dir(root, set_name)
    database = provision_database(work, postgres_url=None)
    server = ServerProcess(database=database, var_dir=work / f"var-{set_name}")
    total = sum(len(rows) for rows in original_folder.conversations(set_name).values())
    try:
        server.start(ready_timeout=180)
        started = time.monotonic()
        server.manage("import_memory", str(root), timeout=1800)
        imported = time.monotonic() - started
        waited = time.monotonic()
        done = 0
        while time.monotonic() - waited < vector_minutes * 60:
            done = int(database.query("SELECT COUNT(*) FROM facts_fact WHERE embedding <> ''")[0][0])
            if done >= total:
                break
            time.sleep(1.0)
        vectors = time.monotonic() - waited
        # Probe r of each character is its first query after the import (r = 0) or after restart r.
        first: dict[tuple[str, int], float] = {}
        first_pass: list[float] = []
        for conv_id, conv_probes in probes.items():
            for i, probe in enumerate(conv_probes):
                score = ask(server, conv_id, probe, id_maps[conv_id])
                first_pass.append(score)
                if i == 0:
                    first[(conv_id, 0)] = score
        warm: dict[tuple[str, int], float] = {}
        for conv_id, conv_probes in probes.items():
            for i, probe in enumerate(conv_probes):
                warm[(conv_id, i)] = ask(server, conv_id, probe, id_maps[conv_id])
        for restart in range(1, restarts + 1):
            server.stop()
            server.start(ready_timeout=180)
            for conv_id, conv_probes in probes.items():
                if restart < len(conv_probes):
                    first[(conv_id, restart)] = ask(server, conv_id, conv_probes[restart], id_maps[conv_id])
    finally:
        server.stop()
        database.drop()
    return {
        "characters": len(probes),
        "probes": len(first_pass),
        "import": imported,
        "vectors": f"{done}/{total} in {vectors:.0f} s",
        "firsts": len(first),
        "first": mean([first[k] for k in first if k[1] == 0]),
        "restart": mean([first[k] for k in first if k[1] > 0]),
        "all_first": mean(list(first.values())),
        "warm_first": mean([warm[k] for k in first]),
        "first_pass": mean(first_pass),
        "warm": mean(list(warm.values())),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(shared_data.SETS), choices=shared_data.SETS)
    parser.add_argument("--vector-minutes", type=float, default=10.0, help="longest wait for the vectors")
    parser.add_argument(
        "--restarts", type=int, default=3, help="restarts, each a new first query a character"
    )
    parser.add_argument("--write-results", action="store_true", help="write the table into the results file")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nekomem-recall-served-"))
    rows = {}
    for set_name in args.sets:
        rows[set_name] = run_set(set_name, work, args.vector_minutes, args.restarts)
        print(f"{set_name}: {rows[set_name]}", flush=True)
    with recall_misses.captured() as printed:
        print_table(rows)
    if args.write_results:
        write_section(printed.getvalue(), args)


def write_section(text: str, args: argparse.Namespace) -> None:
    from datetime import UTC, datetime

    commit = recall_misses._git("rev-parse", "--short", "HEAD")
    dirty = recall_misses._git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs")
    command = "NEKOMEM_SHARED_DATA=../shared/data .venv/bin/python bench/recall_served.py --write-results"
    if list(args.sets) != list(shared_data.SETS):
        command += " --sets " + " ".join(args.sets)
    body = "\n".join(
        [
            "## Through the path a user takes: original folders imported into a running server, over HTTP",
            "",
            f"- commit: `{commit}`{' (with uncommitted changes)' if dirty else ''}",
            f"- date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
            f"- command: `{command}`",
            "",
            "```text",
            text.strip(),
            "```",
        ]
    )
    recall_misses.write_section("served", body)


def print_table(rows: dict[str, dict[str, object]]) -> None:
    print("\nrecall@8 over HTTP on original memory folders imported into a running server (default config)\n")
    keys = ("first", "restart", "all_first", "warm_first", "first_pass", "warm")
    head = (
        f"{'set':<16} {'chars':>5} {'probes':>6} {'import s':>8} {'vectors':>16} {'firsts':>6}"
        f" {'1st/import':>10} {'1st/restart':>11} {'all 1st':>7} {'same warm':>9} {'1st pass':>8} {'warm':>6}"
    )
    print(head)
    print("-" * len(head))
    for set_name, r in rows.items():
        line = f"{set_name:<16} {r['characters']:>5} {r['probes']:>6} {float(r['import']):>8.1f}"  # type: ignore[arg-type]
        line += f" {r['vectors']!s:>16} {r['firsts']:>6}"
        widths = (10, 11, 7, 9, 8, 6)
        line += "".join(f" {float(r[k]):>{w}.3f}" for k, w in zip(keys, widths, strict=True))  # type: ignore[arg-type]
        print(line)
    means = {k: mean([float(r[k]) for r in rows.values()]) for k in keys}  # type: ignore[arg-type]
    line = f"{'mean over sets':<16} {'':>5} {'':>6} {'':>8} {'':>16} {'':>6}"
    line += "".join(f" {means[k]:>{w}.3f}" for k, w in zip(keys, (10, 11, 7, 9, 8, 6), strict=True))
    print(line)
    print(
        "\n(firsts: first queries asked, one a character after the import (1st/import) and after each restart"
    )
    print(" (1st/restart, a new probe each time); same warm: those probes asked warm; 1st pass / warm:")
    print(" every probe, the first time after the import and again)")


if __name__ == "__main__":
    main()
