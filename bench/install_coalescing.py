"""How the install folder's live views coalesce under the load bench's turns (``nekomem/install``).

    NEKOMEM_SHARED_DATA=../shared/data .venv/bin/python bench/install_coalescing.py [--turns 1000]

Starts the server as ``make run`` does (SQLite, ORM broker) in install mode on an empty install
folder, sends ``--turns`` two-message turns over ``--characters`` characters at ``--rate`` turns/s
(the load bench's open loop), waits until every turn is in ``recent.json``, and counts from the
server's log how many times each character's ``recent.json`` and ``time_indexed.db`` were written.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from bench.cache_throughput import run_clients, turn_bodies  # noqa: E402
from tests.support.server_process import server_backend  # noqa: E402

WRITE_LINE = re.compile(r"install folder: wrote (\S+?)/\{([^}]*)\} in (\d+) ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--characters", type=int, default=8)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rate", type=float, default=150.0)
    args = parser.parse_args()
    bodies = turn_bodies(args.turns)
    with tempfile.TemporaryDirectory(prefix="nekomem-install-coalescing-") as tmp:
        root = Path(tmp) / "N.E.K.O"
        (root / "memory").mkdir(parents=True)
        with server_backend(Path(tmp) / "server", postgres_url=None, redis_base_url=None) as server:
            server.extra_env["NEKOMEM_NEKO_ROOT"] = str(root)
            server.start(ready_timeout=120)
            wall, _latencies, errors = run_clients(
                server.port, bodies[: args.turns], args.clients, args.characters, "bench", args.rate
            )
            sent_at = time.monotonic()
            expected = 2 * args.turns
            while time.monotonic() - sent_at < 60:
                seen = 0
                for folder in (root / "memory").glob("bench*"):
                    with contextlib.suppress(OSError, ValueError):
                        seen += len(json.loads((folder / "recent.json").read_text(encoding="utf-8")))
                if seen >= expected:
                    break
                time.sleep(0.2)
            caught_up = time.monotonic() - sent_at
            log = server.log_path.read_text(errors="replace")
    writes: Counter[str] = Counter()
    write_ms: list[int] = []
    for _name, files, ms in WRITE_LINE.findall(log):
        for filename in files.split(","):
            writes[filename] += 1
        write_ms.append(int(ms))
    print(
        f"\ninstall folder live views under /cache load: {args.turns} turns over {args.characters} "
        f"characters at {args.rate:.0f}/s ({wall:.1f} s, {errors} errors); every turn in recent.json "
        f"{caught_up:.1f} s after the last was answered (seen {seen} of {expected} messages)"
    )
    print("| file | writes | turns per write |")
    print("|------|--------|-----------------|")
    for filename in ("recent.json", "time_indexed.db", "outbox.ndjson"):
        count = writes.get(filename, 0)
        print(f"| {filename} | {count} | {args.turns / count if count else float('nan'):.0f} |")
    if write_ms:
        write_ms.sort()
        median = write_ms[len(write_ms) // 2]
        print(f"character writes: {len(write_ms)}, p50 {median} ms, max {write_ms[-1]} ms")


if __name__ == "__main__":
    main()
