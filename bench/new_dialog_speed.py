"""``/new_dialog`` latency with a full long-term memory: 300 persona entries, 200 reflections, 20 turns.

    .venv/bin/python bench/new_dialog_speed.py [--requests 300]

A fresh SQLite database (or ``DATABASE_URL``) gets one character with a 20-field card, 300 persona
entries across the three sections (some suppressed), 200 reflections (pending, confirmed, past) and 20
recent turns written through ``/cache``. The view is then called through Django's test client in this
process (routing, middleware, the settle wait and the render; no socket), after one warm-up request
that fills the token caches. The table gives p50/p95/p99 and the shape of the output; the target is
p95 ≤ 25 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

TARGET_P95_MS = 25.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def populate(name: str, *, baseline: bool = False) -> None:
    from django.utils import timezone

    from nekomem.characters.models import Character
    from persona.models import PersonaEntry, PersonaSection
    from reflections.models import Reflection

    now = timezone.now()
    card = {
        "master": {f"字段{n}": f"值{n}" for n in range(12)},
        "neko": {f"设定{n}": f"内容{n}" for n in range(8)},
    }
    character = Character.objects.create(name=name, master_name="阿凛", card={} if baseline else card)
    if baseline:
        _turns(name)
        return
    sections = ("master", "neko", "relationship")
    for position, key in enumerate(sections):
        PersonaSection.objects.create(character=character, key=key, position=position)
    PersonaEntry.objects.bulk_create(
        PersonaEntry(
            character=character,
            section=sections[n % 3],
            position=n,
            entry_id=f"manual_20261101000000_{n:08x}",
            text=f"主人的第{n}个小习惯：每天{n % 24}点会做一些固定的事情，比如散步、看书或者听音乐",
            reinforcement=(n % 40) / 10,
            rein_last_signal_at=now - timedelta(days=n % 30),
            suppress=n % 50 == 0,
            suppressed_at=now if n % 50 == 0 else None,
            created_at=now,
        )
        for n in range(300)
    )
    statuses = ("pending", "confirmed")
    scopes = ("pattern", "state", "episode", "past")
    Reflection.objects.bulk_create(
        Reflection(
            character=character,
            reflection_id=f"ref_{n:016x}",
            text=f"第{n}条印象：主人最近好像对某件事情特别上心，经常提起相关的话题",
            status=statuses[n % 2],
            temporal_scope=scopes[n % 4],
            created_at=now - timedelta(days=n % 20),
            reinforcement=(n % 30) / 10,
            rein_last_signal_at=now,
        )
        for n in range(200)
    )
    _turns(name)


def _turns(name: str) -> None:
    from django.test import Client

    client = Client(HTTP_HOST="127.0.0.1")
    for n in range(10):
        history = [
            {"type": "human", "data": {"content": f"第{n}轮：今天过得怎么样（叹气）"}},
            {"type": "ai", "data": {"content": f"第{n}轮回复：辛苦啦～【摸摸头】"}},
        ]
        body = json.dumps({"input_history": json.dumps(history, ensure_ascii=False)}, ensure_ascii=False)
        client.post(f"/cache/{name}", data=body, content_type="application/json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument(
        "--baseline", action="store_true", help="the same turns with no persona or reflections (the floor)"
    )
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="nekomem-bench-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nekomem.settings")
    os.environ.setdefault("NEKOMEM_VAR_DIR", tmp)
    os.environ.setdefault("NEKOMEM_REQUIRE_MODELS", "0")
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from nekomem.runtime.startup import startup_run

    call_command("migrate", verbosity=0)
    if not startup_run():
        raise SystemExit("startup failed")
    name = "小天"
    populate(name, baseline=args.baseline)
    client = Client(HTTP_HOST="127.0.0.1")
    first = client.get(f"/new_dialog/{name}")
    body = first.content.decode()
    timings = []
    for _ in range(args.requests):
        start = time.perf_counter()
        response = client.get(f"/new_dialog/{name}")
        timings.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200
    if os.environ.get("BENCH_PROFILE"):
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(20):
            client.get(f"/new_dialog/{name}")
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    p95 = percentile(timings, 0.95)
    rows = [
        (
            "persona entries / reflections / recent messages",
            "0 / 0 / 20" if args.baseline else "300 / 200 / 20",
        ),
        ("requests", str(args.requests)),
        ("output lines / characters", f"{body.count(chr(10))} / {len(body)}"),
        ("mean ms", f"{statistics.fmean(timings):.2f}"),
        ("p50 ms", f"{percentile(timings, 0.50):.2f}"),
        ("p95 ms", f"{p95:.2f}"),
        ("p99 ms", f"{percentile(timings, 0.99):.2f}"),
        ("target p95 ms", f"≤ {TARGET_P95_MS:.0f} ({'met' if p95 <= TARGET_P95_MS else 'MISSED'})"),
    ]
    rows.append(("load average (1 min) / cores", f"{os.getloadavg()[0]:.1f} / {os.cpu_count()}"))
    width = max(len(label) for label, _ in rows)
    print(f"/new_dialog speed ({os.environ['DATABASE_URL'].split(':', 1)[0]})")
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")


if __name__ == "__main__":
    main()
