"""Reflections: /followup_topics and /new_dialog latency, and synthesis throughput.

    flock /tmp/nekomem-bench.lock .venv/bin/python bench/reflections_speed.py \
        [--reflections 200] [--facts 5000] [--requests 300] [--syntheses 50]

One character holds ``--facts`` facts (absorbed, as synthesis leaves them) and ``--reflections``
reflections in a realistic mix (pending, confirmed with evidence, a few past and terminal ones, a
hundred surfaced rows). Both routes are timed through the whole Django stack (middleware included)
with the test client; targets: p95 ≤ 25 ms each. Synthesis throughput runs ``reflection_synthesize``
against a loopback provider that answers at once, five fresh facts per call. Fresh SQLite in a
temporary directory unless ``NEKOMEM_BENCH_DATABASE_URL`` is set.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.scratch import django_on_scratch_database

TARGET_MS = 25.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reflections", type=int, default=200)
    parser.add_argument("--facts", type=int, default=5000)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--syntheses", type=int, default=50)
    args = parser.parse_args()
    django_on_scratch_database(Path(tempfile.mkdtemp(prefix="nekomem-reflections-bench-")))
    from django.conf import settings
    from django.test import Client
    from django.utils import timezone

    from facts.models import Fact
    from facts.services.records import fact_hash, fact_id_for
    from nekomem.characters.models import Character
    from nekomem.embeddings import get_embedder
    from nekomem.llm import reset_compat_cache
    from nekomem.runtime.startup import startup_run
    from reflections.models import Reflection, SurfacedReflection
    from reflections.services import reflection_synthesize
    from reflections.services.records import reflection_id_for
    from tests.support.llm_server import ScriptedLLMServer, json_content

    assert startup_run(), "runtime did not start"
    now = timezone.now()
    character = Character.objects.create(name="小天", master_name="阿凛")
    facts = []
    for i in range(args.facts):
        text = f"阿凛提到过第{i}件小事，和第{i % 37}类爱好有关"
        created = now - timedelta(days=30, seconds=i)
        facts.append(
            Fact(
                character=character,
                fact_id=fact_id_for(created_at=created, hash_=fact_hash(text)) + f"{i}",
                text=text,
                hash=fact_hash(text),
                importance=5 + i % 6,
                created_at=created,
                event_start_at=created,
                absorbed=True,
                signal_processed=True,
            )
        )
    Fact.objects.bulk_create(facts, batch_size=2000)
    statuses = ["pending"] * 5 + ["confirmed"] * 3 + ["promoted", "denied"]
    reflections = []
    for i in range(args.reflections):
        status = statuses[i % len(statuses)]
        ids = [f"fact_bench_{i}_{k}" for k in range(5)]
        reflections.append(
            Reflection(
                character=character,
                reflection_id=reflection_id_for(ids),
                text=f"阿凛似乎对第{i}类爱好一直很上心，经常在晚上提起",
                status=status,
                source_fact_ids=ids,
                created_at=now - timedelta(days=i % 20),
                next_eligible_at=now - timedelta(minutes=1),
                reinforcement=(i % 7) * 0.3,
                rein_last_signal_at=now - timedelta(days=i % 9),
                disputation=0.2 if i % 5 == 0 else 0.0,
                disp_last_signal_at=now - timedelta(days=1) if i % 5 == 0 else None,
                temporal_scope=["pattern", "state", "episode", "past"][i % 4],
            )
        )
    Reflection.objects.bulk_create(reflections)
    SurfacedReflection.objects.bulk_create(
        SurfacedReflection(
            character=character,
            reflection_id=r.reflection_id,
            text=r.text,
            surfaced_at=now,
            feedback="ignored",
        )
        for r in reflections[:100]
    )

    client = Client(HTTP_HOST="127.0.0.1")  # the host guard admits loopback names only
    rows = []
    for label, path in (
        ("GET /followup_topics", "/followup_topics/小天"),
        ("GET /new_dialog", "/new_dialog/小天"),
    ):
        for _ in range(10):
            assert client.get(path).status_code == 200  # warm-up: connections, token counter, caches
        times = []
        for _ in range(args.requests):
            started = time.perf_counter()
            response = client.get(path)
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200
        rows.append((label, statistics.median(times), percentile(times, 0.95), max(times)))

    server = ScriptedLLMServer()
    reply = {
        "reflection": "阿凛是个很有生活情趣的人",
        "entity": "master",
        "relation_type": "trait",
        "temporal_scope": "pattern",
        "subject": "生活",
        "event_when": None,
    }
    server.fallback = lambda _body: json_content(reply)
    server.start()
    settings.LLM_TIERS = {
        t: {"base_url": server.base_url, "api_key": "x", "model": "instant"} for t in settings.LLM_TIER_NAMES
    }
    reset_compat_cache()
    get_embedder()  # synthesis asks for vectors; load the model before the clock starts
    made = 0
    started = time.perf_counter()
    for n in range(args.syntheses):
        Fact.objects.bulk_create(
            Fact(
                character=character,
                fact_id=f"fact_new_{n}_{k}",
                text=f"阿凛今天第{n}次说起第{k}件新鲜事",
                hash=fact_hash(f"{n}-{k}"),
                importance=7,
                created_at=now,
                event_start_at=now,
            )
            for k in range(5)
        )
        made += reflection_synthesize(character_id=character.pk).reflection is not None
    elapsed = time.perf_counter() - started
    server.stop()

    database = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    print(f"\nreflections bench ({database}): {args.reflections} reflections, {args.facts} facts\n")
    print(f"{'route':<22} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'target':>8}")
    for label, p50, p95, worst in rows:
        verdict = "ok" if p95 <= TARGET_MS else "MISSED"
        print(f"{label:<22} {p50:>8.2f} {p95:>8.2f} {worst:>8.2f} {verdict:>8}")
    per_call = elapsed / max(1, made) * 1000
    print(
        f"\nsynthesis (instant loopback LLM): {made}/{args.syntheses} "
        f"in {elapsed:.2f} s, {per_call:.1f} ms each"
    )


if __name__ == "__main__":
    main()
