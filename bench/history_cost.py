"""What recording history costs (issue 49): the write paths a version rides on, and the chat routes.

    NEKOMEM_SHARED_DATA=../shared/data PYTHONPATH=. .venv/bin/python bench/history_cost.py [--rounds 12]
        [--per-round 25] [--facts 2000] [--markdown FILE] [--profile N]

One process on a scratch SQLite database (``NEKOMEM_BENCH_DATABASE_URL`` for another), one character
holding ``--facts`` facts, 50 persona entries and 50 reflections. "History off" is the journal's
memory-change observer taken out (``nekomem.journal.handlers`` registers it as ``journal.versions``):
the same writes, with no version appended; there is no such switch in the server, history is always on.

Each operation runs in ``--rounds`` rounds of ``--per-round`` calls per mode, history on and off
alternating every five calls (so a noisy neighbour's burst hits both alike). The cost is the median over
rounds of each round's median on over its median off, with a 95 % bootstrap interval over the rounds: a
slow stretch moves both modes of its round, not the figure. Pooled medians and p95 are shown as well.
Each call's CPU time in this thread is taken too: on the scratch SQLite database the whole write runs in
this thread, so its CPU cost is what the write costs without the time it waited for a busy machine's CPU
(on PostgreSQL the server's share is not in it). The target is read on wall time.

- write paths: a fact edit (``fact_update``, the REST/browser edit), an extraction's persist of five new
  facts (``facts_persist``), a persona entry edit, a reflection edit. Target: the median with history
  on at most 10 % above the median with it off.
- chat routes, through Django's test client: ``POST /cache`` (a two-message turn) and
  ``POST /query_memory``. They write no version (tested); target: p95 on within noise of p95 off.

``--profile N`` instead runs N fact edits with history on under cProfile and prints where they spend
(cumulative, the version observer's callees first): what a version costs an edit beyond its insert.

Prints one markdown table (``--markdown FILE`` also writes it there). Latencies on a shared machine
are noisy: rerun on a quiet one before reading much into a few per cent.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.scratch import django_on_scratch_database

OBSERVER = "journal.versions"


@contextmanager
def history(on: bool) -> Iterator[None]:
    from nekomem.characters import services

    saved = services._change_observers.get(OBSERVER)
    if not on and saved is not None:
        services._change_observers.pop(OBSERVER)
    try:
        yield
    finally:
        if saved is not None:
            services._change_observers[OBSERVER] = saved


# Calls timed back to back in one mode before switching: short enough that a noisy neighbour's burst
# hits both modes, long enough that switching (outside the timing) is no part of what is measured.
BATCH = 5


@dataclass
class Timings:
    """Per-call times (ms) of one operation, by round and mode: wall, and this thread's CPU."""

    rounds: list[dict[bool, list[float]]] = field(default_factory=list)
    cpu_rounds: list[dict[bool, list[float]]] = field(default_factory=list)

    def pooled(self, on: bool) -> list[float]:
        return [t for times in self.rounds for t in times[on]]

    def round_costs(self, *, cpu: bool = False) -> list[float]:
        """Each round's extra with history on, in per cent: its median on over its median off."""
        return [
            (statistics.median(times[True]) / statistics.median(times[False]) - 1) * 100
            for times in (self.cpu_rounds if cpu else self.rounds)
        ]


def measure(op: Callable[[int], Any], *, rounds: int, per_round: int) -> Timings:
    """``per_round`` calls per mode and round, in batches of ``BATCH`` alternating on and off (the first
    mode alternating too), so drift and bursts fall on both modes alike."""
    timings = Timings()
    counter = itertools.count()
    for round_number in range(rounds):
        wall: dict[bool, list[float]] = {True: [], False: []}
        cpu: dict[bool, list[float]] = {True: [], False: []}
        for batch_number in range(max(1, per_round // BATCH)):
            first = (round_number + batch_number) % 2 == 0
            for on in (first, not first):
                with history(on):
                    for _ in range(BATCH):
                        started, started_cpu = time.perf_counter(), time.thread_time()
                        op(next(counter))
                        cpu[on].append((time.thread_time() - started_cpu) * 1000)
                        wall[on].append((time.perf_counter() - started) * 1000)
        timings.rounds.append(wall)
        timings.cpu_rounds.append(cpu)
    return timings


def bootstrap_interval(values: list[float], *, resamples: int = 2000) -> tuple[float, float]:
    """A 95 % percentile-bootstrap interval of the median of ``values`` (seeded: reruns agree)."""
    rng = random.Random(49)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(resamples))
    return medians[int(resamples * 0.025)], medians[int(resamples * 0.975) - 1]


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[18]


def seed(facts: int) -> tuple[int, list[str], list[str], list[str]]:
    from django.utils import timezone

    from facts.models import Fact
    from facts.services import FactDraft, facts_persist
    from nekomem.characters.services import character_get_or_create
    from persona.models import PersonaEntry
    from persona.services import persona_entry_create
    from reflections.models import Reflection

    character = character_get_or_create(name="历史成本")
    for start in range(0, facts, 200):
        facts_persist(
            character_id=character.pk,
            drafts=[
                FactDraft(text=f"主人第{i}次提到第{i * 7 % 97}种爱好") for i in range(start, start + 200)
            ],
        )
    for i in range(50):
        persona_entry_create(character_id=character.pk, entity="master", text=f"主人的第{i}个习惯")
    Reflection.objects.bulk_create(
        Reflection(
            character=character,
            reflection_id=f"ref_bench_{i:04d}",
            text=f"主人似乎喜欢第{i}种茶",
            entity="master",
            created_at=timezone.now(),
        )
        for i in range(50)
    )
    fact_ids = list(Fact.objects.filter(character=character).values_list("fact_id", flat=True)[:200])
    entry_ids = list(PersonaEntry.objects.filter(character=character).values_list("entry_id", flat=True))
    reflection_ids = list(
        Reflection.objects.filter(character=character).values_list("reflection_id", flat=True)
    )
    return character.pk, fact_ids, entry_ids, reflection_ids


def profile_fact_edits(fact_edit: Callable[[int], Any], calls: int) -> int:
    import cProfile
    import pstats

    for n in range(calls):  # warm: the first calls build caches a steady edit does not
        fact_edit(n)
    profiler = cProfile.Profile()
    profiler.enable()
    for n in range(calls, 2 * calls):
        fact_edit(n)
    profiler.disable()
    stats = pstats.Stats(profiler).sort_stats("cumulative")
    stats.print_callees("versions_record")
    stats.print_stats(30)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--per-round", type=int, default=25)
    parser.add_argument("--facts", type=int, default=2000)
    parser.add_argument("--markdown", type=Path)
    parser.add_argument("--profile", type=int, default=0, metavar="N")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="nekomem-history-bench-"))
    django_on_scratch_database(work)
    from django.test import Client

    from facts.services import FactDraft, fact_update, facts_persist
    from nekomem.runtime.startup import startup_run
    from persona.services import persona_entry_edit
    from reflections.services import reflection_edit

    if not startup_run():
        raise SystemExit("startup failed")
    character_id, fact_ids, entry_ids, reflection_ids = seed(args.facts)
    client = Client(HTTP_HOST="127.0.0.1")
    name = "历史成本"

    def fact_edit(n: int) -> None:
        fact_update(character_id=character_id, fact_id=fact_ids[n % len(fact_ids)], importance=1 + n % 10)

    def persist(n: int) -> None:
        facts_persist(
            character_id=character_id,
            drafts=[FactDraft(text=f"新的第{n}批第{k}条：主人周{k}去了第{n}家店") for k in range(5)],
        )

    def entry_edit(n: int) -> None:
        persona_entry_edit(
            character_id=character_id, entry_id=entry_ids[n % len(entry_ids)], text=f"主人的习惯，第{n}版"
        )

    def reflection_text(n: int) -> None:
        reflection_edit(
            character_id=character_id,
            reflection_id=reflection_ids[n % len(reflection_ids)],
            text=f"主人似乎喜欢茶，第{n}版",
        )

    def cache(n: int) -> None:
        turn = [
            {"type": "human", "data": {"content": f"今天第{n}次聊到猫"}},
            {"type": "ai", "data": {"content": "好呀，说说看"}},
        ]
        body = json.dumps({"input_history": json.dumps(turn, ensure_ascii=False)}, ensure_ascii=False)
        assert client.post(f"/cache/{name}", body, content_type="application/json").status_code == 200

    def query(n: int) -> None:
        body = json.dumps({"query": f"主人第{n % 97}种爱好"}, ensure_ascii=False)
        assert client.post(f"/query_memory/{name}", body, content_type="application/json").status_code == 200

    if args.profile:
        return profile_fact_edits(fact_edit, args.profile)
    # The first query builds the recall index: not a per-call cost.
    first = client.post(f"/query_memory/{name}", json.dumps({"query": "爱好"}), "application/json")
    assert first.status_code == 200, first.content
    ops: list[tuple[str, str, Callable[[int], Any]]] = [
        ("write", "fact edit (fact_update)", fact_edit),
        ("write", "extraction persist, 5 facts (facts_persist)", persist),
        ("write", "persona entry edit", entry_edit),
        ("write", "reflection edit", reflection_text),
        ("chat", "POST /cache", cache),
        ("chat", "POST /query_memory", query),
    ]
    lines = [
        f"history_cost: {args.facts} facts, {args.rounds} rounds x {args.per_round} calls per mode, "
        f"history on/off alternating every {BATCH} calls (shared, noisy machine). Cost: the median over "
        "rounds of each round's median on / median off, with a 95 % bootstrap interval over rounds; "
        "wall time, and this thread's CPU time (the whole write on SQLite, without waits for the CPU).",
        "",
        "| path | median on (ms) | median off (ms) | cost, wall | 95 % interval | cost, thread CPU "
        "| 95 % interval | p95 on (ms) | p95 off (ms) | p95 + | target |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    failed = False
    for kind, label, op in ops:
        timings = measure(op, rounds=args.rounds, per_round=args.per_round)
        on, off = timings.pooled(True), timings.pooled(False)
        med_on, med_off = statistics.median(on), statistics.median(off)
        p_on, p_off = p95(on), p95(off)
        costs, cpu_costs = timings.round_costs(), timings.round_costs(cpu=True)
        cost, cpu_cost = statistics.median(costs), statistics.median(cpu_costs)
        (low, high), (cpu_low, cpu_high) = bootstrap_interval(costs), bootstrap_interval(cpu_costs)
        p_extra = (p_on / p_off - 1) * 100
        if kind == "write":
            target, ok = "median ≤ +10 %", cost <= 10
        else:
            target, ok = "p95 within noise", abs(p_extra) <= 15
        failed |= not ok
        lines.append(
            f"| {label} | {med_on:.2f} | {med_off:.2f} | {cost:+.1f} % | {low:+.1f} … {high:+.1f} % "
            f"| {cpu_cost:+.1f} % | {cpu_low:+.1f} … {cpu_high:+.1f} % "
            f"| {p_on:.2f} | {p_off:.2f} | {p_extra:+.1f} % | {target}: {'ok' if ok else 'MISSED'} |"
        )
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
