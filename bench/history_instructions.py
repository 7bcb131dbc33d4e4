"""What a version costs a fact edit, counted in instructions (issue 49): immune to a busy machine.

    PYTHONPATH=. .venv/bin/python bench/history_instructions.py [--edits 200] [--facts 200] [--cache-sim]

``bench/history_cost.py`` reads the cost on wall time, which other work on a shared machine moves by more
than a few per cent. This runs the same edit (``fact_update``, importance only, on a scratch SQLite
database seeded as that bench seeds it) under valgrind's callgrind, once with history on and once off (two
processes), instrumentation switched on only around the counted edits (after 20 warm-up ones), and prints
the instructions per edit of each and what a version adds. ``--cache-sim`` also simulates the caches and
prints estimated cycles (Ir + 10 x L1 misses + 100 x last-level misses). Needs ``valgrind`` on the PATH;
about two minutes a mode.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

WARM_UP = 20


def edits(mode: str, count: int, facts: int) -> None:
    """The counted process: seed, warm up, then ``count`` edits with callgrind's instrumentation on."""
    from bench.history_cost import history, seed
    from bench.scratch import django_on_scratch_database

    django_on_scratch_database(Path(tempfile.mkdtemp(prefix="nekomem-history-instructions-")))
    from facts.services import fact_update
    from nekomem.runtime.startup import startup_run

    if not startup_run():
        raise SystemExit("startup failed")
    character_id, fact_ids, _, _ = seed(facts)

    def edit(n: int) -> None:
        fact_update(character_id=character_id, fact_id=fact_ids[n % len(fact_ids)], importance=1 + n % 10)

    def instrument(state: str) -> None:
        subprocess.run(["callgrind_control", "-i", state, str(os.getpid())], check=True, capture_output=True)

    with history(mode == "on"):
        for n in range(WARM_UP):
            edit(n)
        instrument("on")
        for n in range(WARM_UP, WARM_UP + count):
            edit(n)
        instrument("off")


def counted(mode: str, args: argparse.Namespace) -> dict[str, int]:
    """Run one mode under callgrind; its totals (``I refs`` and, with the cache simulated, misses)."""
    with tempfile.TemporaryDirectory() as work:
        command = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            f"--callgrind-out-file={work}/callgrind.out",
            *(["--cache-sim=yes"] if args.cache_sim else []),
            sys.executable,
            __file__,
            "--child",
            mode,
            "--edits",
            str(args.edits),
            "--facts",
            str(args.facts),
        ]
        env = {**os.environ, "NEKOMEM_EMBEDDINGS": "0"}
        for name in ("DATABASE_URL", "REDIS_URL"):
            env.pop(name, None)
        log = subprocess.run(command, capture_output=True, text=True, env=env, check=True).stderr
    totals = {}
    for label, key in (("I   refs", "ir"), ("I1  misses", "i1"), ("LLi misses", "lli"), ("D1  misses", "d1")):
        if found := re.search(re.escape(label) + r":\s+([\d,]+)", log):
            totals[key] = int(found.group(1).replace(",", ""))
    if found := re.search(r"LLd misses:\s+([\d,]+)", log):
        totals["lld"] = int(found.group(1).replace(",", ""))
    if "ir" not in totals and (found := re.search(r"Collected : (\d+)", log)):
        totals["ir"] = int(found.group(1))
    return totals


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--facts", type=int, default=200)
    parser.add_argument("--cache-sim", action="store_true")
    parser.add_argument("--child", choices=("on", "off"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        edits(args.child, args.edits, args.facts)
        return 0
    per_edit: dict[str, dict[str, float]] = {}
    for mode in ("on", "off"):
        totals = counted(mode, args)
        row = {"instructions": totals["ir"] / args.edits}
        if args.cache_sim:
            misses = totals.get("i1", 0) + totals.get("d1", 0)
            last = totals.get("lli", 0) + totals.get("lld", 0)
            row["estimated cycles"] = (totals["ir"] + 10 * misses + 100 * last) / args.edits
        per_edit[mode] = row
    print(f"history_instructions: {args.edits} fact edits a mode, {args.facts} facts, scratch SQLite")
    for measure in per_edit["on"]:
        on, off = per_edit["on"][measure], per_edit["off"][measure]
        print(
            f"{measure} per edit: on {on:,.0f}, off {off:,.0f}; a version adds {on - off:,.0f} "
            f"({(on / off - 1) * 100:+.2f} %)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
