"""The cluster's side of the outbox: claiming and finishing ops, through the ORM or one raw statement.

    .venv/bin/python bench/outbox_claim.py [--ops 4000] [--rounds 3] [--backends sqlite,postgres]

Inserts ``--ops`` post-turn-sized ops, then runs them the way the cluster does (batches of 20: claim,
run a step that does nothing, mark done) and reports ops/s and the statements each batch sent. Two
claims are compared on the same database, alternating per round: the ORM claim the outbox uses
(``UPDATE`` then ``SELECT`` of the claimed rows) and a hand-built ``UPDATE … RETURNING`` doing the same
in one statement. Each backend runs in a process of its own on a scratch database (SQLite in a
temporary directory; PostgreSQL on ``--postgres-url``, in a database created for the run and dropped).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"
BATCH = 20
OP_TYPE = "bench_noop"


def orm_claim(op_ids: list[uuid.UUID]) -> tuple[uuid.UUID | None, dict[uuid.UUID, Any]]:
    """The claim through the ORM: ``work_claim``'s ``UPDATE``, then a ``SELECT`` of the rows it took."""
    from nekomem.journal.models import OutboxOp
    from nekomem.journal.services import ClaimedOp
    from nekomem.journal.work import DEFAULT_LEASE, work_claim

    token = work_claim(OutboxOp.objects.filter(op_id__in=op_ids), lease=DEFAULT_LEASE)
    if token is None:
        return None, {}
    rows = OutboxOp.objects.filter(op_id__in=op_ids, run_token=token).values_list(
        "op_id", "character_id", "type", "payload", "steps_done"
    )
    return token, {
        op_id: ClaimedOp(
            op_id=op_id, character_id=character_id, type=op_type, payload=payload, steps_done=list(done)
        )
        for op_id, character_id, op_type, payload, done in rows
    }


def run_backend(database_url: str, ops: int, rounds: int) -> dict[str, Any]:
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nekomem.settings")
    os.environ.setdefault("NEKOMEM_LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection, reset_queries
    from django.test.utils import CaptureQueriesContext

    from nekomem.characters.models import Character
    from nekomem.journal import services
    from nekomem.journal.models import OutboxOp
    from nekomem.journal.registry import register_outbox_step

    call_command("migrate", verbosity=0)
    register_outbox_step(OP_TYPE, "noop", lambda character_id, payload: None)
    characters = [Character.objects.create(name=f"bench{i}") for i in range(8)]
    payload = {"session_id": "x", "messages": [{"type": "human", "data": {"content": "你好" * 40}}] * 2}
    returning_claim = services._claim  # the one the outbox uses
    timings: dict[str, list[float]] = {"orm": [], "returning": []}
    statements: dict[str, float] = {}
    for round_no in range(rounds):
        for name, claim in (("orm", orm_claim), ("returning", returning_claim))[:: 1 if round_no % 2 else -1]:
            OutboxOp.objects.all().delete()
            rows = [
                OutboxOp(character=characters[i % len(characters)], type=OP_TYPE, payload=payload)
                for i in range(ops)
            ]
            OutboxOp.objects.bulk_create(rows, batch_size=500)
            ids = [row.op_id for row in rows]
            services._claim = claim  # type: ignore[assignment]
            reset_queries()
            began = time.perf_counter()
            with CaptureQueriesContext(connection) as captured:
                for start in range(0, len(ids), BATCH):
                    services.outbox_ops_execute(op_ids=ids[start : start + BATCH])
            timings[name].append(time.perf_counter() - began)
            statements[name] = len(captured.captured_queries) / (len(ids) / BATCH)
            services._claim = returning_claim
            assert not OutboxOp.objects.exclude(status="done").exists()
    return {
        name: {"ops_per_s": ops / statistics.median(times), "statements_per_batch": statements[name]}
        for name, times in timings.items()
    }


def scratch_postgres(url: str) -> tuple[str, str]:
    import psycopg

    name = f"nekomem_outbox_bench_{os.getpid()}"
    with psycopg.connect(url.replace("postgres://", "postgresql://"), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + f"/{name}", name


def drop_postgres(url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(url.replace("postgres://", "postgresql://"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ops", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--postgres-url", default=os.environ.get("NEKOMEM_BENCH_POSTGRES", DEFAULT_POSTGRES))
    parser.add_argument("--run-one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_one:
        print(json.dumps(run_backend(args.run_one, args.ops, args.rounds)))
        return
    print(f"outbox ops run in batches of {BATCH}, {args.ops} ops, median of {args.rounds} rounds")
    print("| backend  | claim     | ops/s  | statements per batch |")
    print("|----------|-----------|--------|----------------------|")
    for backend in args.backends.split(","):
        dropped: str | None = None
        if backend == "sqlite":
            url = f"sqlite:///{Path(tempfile.mkdtemp(prefix='nekomem-outbox-bench-')) / 'bench.sqlite3'}"
        else:
            url, dropped = scratch_postgres(args.postgres_url)
        try:
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--run-one",
                    url,
                    "--ops",
                    str(args.ops),
                    "--rounds",
                    str(args.rounds),
                ],
                check=True,
                capture_output=True,
                text=True,
                cwd=REPO_ROOT,
            ).stdout
        finally:
            if dropped:
                drop_postgres(args.postgres_url, dropped)
        result = json.loads(out.strip().splitlines()[-1])
        for name in ("orm", "returning"):
            row = result[name]
            rate, per_batch = row["ops_per_s"], row["statements_per_batch"]
            print(f"| {backend:<8} | {name:<9} | {rate:>6.0f} | {per_batch:>20.1f} |")


if __name__ == "__main__":
    main()
