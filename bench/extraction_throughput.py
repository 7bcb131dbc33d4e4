"""Stage-1 extraction throughput with an instant-answering loopback LLM.

    flock /tmp/nekomem-bench.lock .venv/bin/python bench/extraction_throughput.py \
        [--characters 20] [--turns 30] [--existing 0 1000 10000 100000]

Each character gets ``--turns`` user/AI turns of memorybank-cn in its raw log; one scheduled tick per
character then runs path A (the LLM answers at once with three facts per call, one of them a near
duplicate so the dedup layers work). A second table times ``facts_persist`` alone for a batch of 3
against characters that already hold ``--existing`` facts, indexed for the near-duplicate layer as an
import leaves them (the "indexed" column, three repeats: first / median), and once more against the
same number of facts nobody indexed yet (the lazy backfill a migrated database pays once per character).
Fresh SQLite in a temporary directory unless ``NEKOMEM_BENCH_DATABASE_URL`` is set.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.scratch import django_on_scratch_database


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--characters", type=int, default=20)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--existing", type=int, nargs="*", default=[0, 1000, 10000, 100000])
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nekomem-extract-bench-"))
    django_on_scratch_database(work)
    from django.conf import settings
    from django.db import connection
    from django.utils import timezone

    from bench.shared_data import conversation
    from facts.models import Fact
    from facts.services import FactDraft, facts_extraction_tick, facts_persist
    from facts.services.tokens import facts_index_rows_write, facts_tokenize
    from nekomem.characters.models import Character
    from nekomem.llm import reset_compat_cache
    from recent.services import raw_log_append
    from tests.support.llm_server import Reply, ScriptedLLMServer, json_content

    counter = itertools.count()

    def answer(_: object) -> Reply:
        n = next(counter)
        return json_content(
            [
                {"text": f"阿凛提到了第{n}件事", "importance": 7, "entity": "master", "event_when": None},
                {"text": f"阿凛提到了第{n}件事情", "importance": 6, "entity": "master", "event_when": None},
                {"text": f"阿凛的第{n}个爱好是散步", "importance": 5, "entity": "master", "event_when": None},
            ]
        )

    server = ScriptedLLMServer()
    server.fallback = answer
    server.start()
    settings.LLM_TIERS = {
        t: {"base_url": server.base_url, "api_key": "x", "model": "instant"} for t in settings.LLM_TIER_NAMES
    }
    reset_compat_cache()
    turns = conversation("memorybank-cn")
    now = timezone.now()
    ids = []
    for c in range(args.characters):
        character = Character.objects.create(name=f"bench{c}", master_name="阿凛")
        for i in range(args.turns):
            pair = turns[(2 * i) % len(turns) : (2 * i) % len(turns) + 2]
            messages = [
                {"type": "human" if t["role"] == "user" else "ai", "data": {"content": t["text"]}}
                for t in pair
            ]
            raw_log_append(
                character_id=character.pk, messages=messages, timestamp=now - timedelta(seconds=300 - i)
            )
        ids.append(character.pk)

    began = time.perf_counter()
    for cid in ids:
        facts_extraction_tick(character_id=cid, now=now + timedelta(seconds=30))
    elapsed = time.perf_counter() - began
    created = Fact.objects.count()
    calls = len(server.requests)
    print(f"database: {connection.vendor}")
    print("| ticks | LLM calls | facts stored | seconds | ticks/s | facts/s | ms/tick |")
    print("|------:|----------:|-------------:|--------:|--------:|--------:|--------:|")
    print(
        f"| {len(ids)} | {calls} | {created} | {elapsed:.2f} | {len(ids) / elapsed:.1f} "
        f"| {created / elapsed:.1f} | {1000 * elapsed / len(ids):.1f} |"
    )

    print()
    print("| existing facts | facts_persist(3 drafts) ms: first / median of 3 | first store, unindexed ms |")
    print("|---------------:|-----------------------------------------------:|--------------------------:|")

    def existing_facts(character: Character, count: int, *, indexed: bool) -> None:
        rows = [
            Fact(
                character=character,
                fact_id=f"fact_x_{i}",
                text=f"阿凛记得第{i}个故事里的{i % 97}号角色",
                hash=f"h{i}",
                created_at=now,
            )
            for i in range(count)
        ]
        if indexed:  # as import_memory leaves them
            facts_tokenize(rows, stop_names=character.stop_names)
        Fact.objects.bulk_create(rows, batch_size=2000)
        if indexed:
            facts_index_rows_write(character_id=character.pk, facts=rows)

    def store(character: Character, round_: int) -> float:
        suffix = f"（又{round_}次）" if round_ else ""  # round 0: the drafts the first version timed
        drafts = [FactDraft(text=f"阿凛新说的第{k}件事{suffix}") for k in range(3)]
        began = time.perf_counter()
        facts_persist(character_id=character.pk, drafts=drafts)
        return 1000 * (time.perf_counter() - began)

    for existing in args.existing:
        character = Character.objects.create(name=f"persist{existing}", master_name="阿凛")
        existing_facts(character, existing, indexed=True)
        times = [store(character, r) for r in range(3)]
        cold = Character.objects.create(name=f"cold{existing}", master_name="阿凛")
        existing_facts(cold, existing, indexed=False)
        lazy = store(cold, 0)
        print(f"| {existing} | {times[0]:.1f} / {sorted(times)[1]:.1f} | {lazy:.1f} |")
    server.stop()


if __name__ == "__main__":
    main()
