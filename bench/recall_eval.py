"""Recall quality on the development data (../shared/data, protocol in its README).

    .venv/bin/python bench/recall_eval.py [--sets locomo10 ...] [--keep DIR] [--misses DIR] [--write-results]

Each conversation of each set becomes one character, through the real import path: a NEKO-layout
directory ``ROOT/<conv_id>/facts.json`` (one fact per turn, event time = the turn's time, the speaker's
name in front of dialogue turns) is written and ``manage.py import_memory`` reads it; the embedding
backfill then fills the vectors (as the schedule would). Every probe is asked through ``POST
/query_memory/<name>`` (Django test client, full middleware stack) under each named configuration, and
recall@8 = |evidence ∩ returned| / |evidence|, averaged over probes with evidence, is printed per set.
The database is a fresh SQLite file in a temporary directory; nothing touches the project's database.

A second table asks the same probes of each conversation imported as its raw log only, and a third
of each conversation imported as confirmed reflections only (``reflections.json``, one per turn):
once before the backfill has embedded them (BM25 alone, as recall ranked reflections before they had
vectors) and once after (the reflection-vector pool in the cosine path).

A last table does the same on the hand-written sets of the six other locales (ja, ko, ru, es, pt, zh-TW;
``tests/fixtures/recall_sets/``, ``bench/locale_sets.py``): ten conversations each, three probes per
conversation, one of them naming a time, which is asked with its question as ``time`` too.

``--misses DIR`` writes ``DIR/<set>.md`` and ``DIR/<set>.jsonl``: every probe whose gold turn is not in the
default configuration's top 8, where each path ranked it, what outranked it and a one-line guess why
(``bench/recall_misses.py``). ``--write-results`` rewrites ``docs/recall-results.md`` with these tables,
the commit, the date and the command (``make bench`` does), and a per-language table of the embedders.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import locale_sets, recall_misses, shared_data

ROWS = [
    ("bm25", "BM25 only (original tokenizer)"),
    ("bm25-nekomem", "BM25 only (nekomem lexical views)"),
    ("vectors", "vectors only (per language)"),
    ("original", "original config (4+4, RRF k60)"),
    ("nekomem", "nekomem default"),
]
# The default's variants (``recall/engine/configs.py``, ``VARIANTS``): what each change bought, and the
# changes measured and not taken. Main table only.
VARIANT_ROWS = [
    ("nekomem-muse", "  before: muse for all, vw 0.8, no when"),
    ("nekomem-w1", "  vector weight 1.0 (±1 probe a set: noise)"),
    ("nekomem-mean", "  mean of both models for all languages"),
    ("nekomem-no-when", "  without the when-question bonus"),
    ("nekomem-slots3", "  rejected: 3 guaranteed cosine slots"),
    ("nekomem-floor-list", "  rejected: min-max over each path's list"),
    ("nekomem-no-context", "  before #36: no context, feedback, q-words"),
    ("nekomem-feedback", "  with the feedback terms (RM3; off, #50)"),
    ("nekomem-question-words-out", "  question words taken out (off, #50)"),
    ("nekomem-ctx-any", "  rejected: context from any neighbour"),
    ("nekomem-pp50", "  50 candidates a path (no change)"),
]
# Mem0 OSS 2.2.1 on the same data and protocol (issue 5).
MEM0 = {
    "locomo10": 0.565,
    "memorybank-cn": 0.395,
    "memorybank-en": 0.914,
    "madial_bench-ch": 0.174,
    "madial_bench-en": 0.661,
}


def fact_text(turn: dict) -> str:
    # A fact says who said it; MADial "turns" are already third-person memories.
    return turn["text"] if turn.get("kind") == "memory" else f"{turn['speaker']}: {turn['text']}"


def write_neko_dir(root: Path, set_name: str) -> tuple[dict[str, dict[str, str]], dict[str, list[dict]]]:
    """ROOT/<character>/facts.json per conversation; returns {character: {fact_id: turn_id}} and probes."""
    convs: dict[str, list[dict]] = defaultdict(list)
    for turn in shared_data.turns(set_name):
        convs[turn["conv_id"]].append(turn)
    id_maps: dict[str, dict[str, str]] = {}
    for conv_id, rows in convs.items():
        facts, id_map = [], {}
        for turn in sorted(rows, key=lambda t: t["idx"]):
            text = fact_text(turn)
            when = datetime.fromisoformat(turn["timestamp"])
            digest = hashlib.sha256(f"{conv_id}\0{turn['turn_id']}\0{text}".encode()).hexdigest()
            fact_id = f"fact_{when:%Y%m%d%H%M%S}_{digest[:8]}"
            id_map[fact_id] = turn["turn_id"]
            facts.append(
                {
                    "id": fact_id,
                    "text": text,
                    "importance": 5,
                    "entity": "master" if turn["role"] == "user" else "neko",
                    "source": "user_observation",
                    "tags": ["external_import", "bench"],
                    "hash": digest[:16],
                    "created_at": when.isoformat(),
                    "event_when_raw": None,
                    "event_start_at": when.isoformat(),
                    "event_end_at": None,
                    "schema_version": 2,
                    "absorbed": False,
                    "signal_processed": True,
                }
            )
        folder = root / conv_id
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "facts.json").write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")
        id_maps[conv_id] = id_map
    probes: dict[str, list[dict]] = defaultdict(list)
    for probe in shared_data.probes(set_name):
        if probe["evidence_turn_ids"] and probe["conv_id"] in convs:
            probes[probe["conv_id"]].append(probe)
    return id_maps, probes


def write_raw_dir(root: Path, set_name: str) -> list[str]:
    """ROOT/<conv>_raw/time_indexed.db per conversation: the same turns as raw-log messages (no facts, as
    before any extraction), the turn id kept in the row's session id to score the answers."""
    turns = shared_data.turns(set_name)
    convs: dict[str, list[dict]] = defaultdict(list)
    for turn in turns:
        convs[turn["conv_id"]].append(turn)
    for conv_id, rows in convs.items():
        folder = root / f"{conv_id}_raw"
        folder.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(folder / "time_indexed.db")
        db.execute(
            "CREATE TABLE time_indexed_original"
            " (id INTEGER PRIMARY KEY, session_id TEXT, message TEXT, timestamp DATETIME)"
        )
        for turn in sorted(rows, key=lambda t: t["idx"]):
            kind = "human" if turn["role"] == "user" else "ai"
            message = {"type": kind, "data": {"content": fact_text(turn)}}
            db.execute(
                "INSERT INTO time_indexed_original (session_id, message, timestamp) VALUES (?, ?, ?)",
                (
                    turn["turn_id"],
                    json.dumps(message, ensure_ascii=False),
                    turn["timestamp"].replace("T", " "),
                ),
            )
        db.commit()
        db.close()
    return list(convs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(shared_data.SETS), choices=shared_data.SETS)
    parser.add_argument("--keep", type=Path, help="work directory to keep (default: a temporary one)")
    parser.add_argument("--no-raw", action="store_true", help="skip the raw-turn pool table")
    parser.add_argument("--no-reflections", action="store_true", help="skip the reflection pool table")
    parser.add_argument(
        "--locales",
        nargs="*",
        default=list(locale_sets.LOCALES),
        choices=locale_sets.LOCALES,
        help="hand-written locale sets to run (none: skip that table)",
    )
    parser.add_argument("--misses", type=Path, help="write each set's misses to DIR/<set>.md and .jsonl")
    parser.add_argument(
        "--write-results",
        action="store_true",
        help=f"rewrite {recall_misses.RESULTS_FILE.relative_to(recall_misses.ROOT)} with the tables printed",
    )
    args = parser.parse_args()
    if args.write_results:
        with recall_misses.captured() as printed:
            run(args)
        recall_misses.write_results(printed.getvalue(), sets=args.sets)
    else:
        run(args)


def run(args: argparse.Namespace) -> None:

    work = args.keep or Path(tempfile.mkdtemp(prefix="nekomem-recall-eval-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ["DATABASE_URL"] = f"sqlite:///{work / 'bench.sqlite3'}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nekomem.settings")
    os.environ.setdefault("NEKOMEM_LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client

    from nekomem.characters.models import Character
    from nekomem.embeddings import get_embedder
    from nekomem.runtime.startup import startup_run
    from recall.backfill import embedding_backfill

    # Backfilled vectors reach an index inline at its catch-up, not from the filler thread. The configs
    # below alternate between BM25-only and vector indexes, so each query swaps the character's cached
    # index (a snapshot saved before the backfill, loaded and caught up): the filler always filled the
    # index just replaced, and the vector path read 0.000. Inline, every query ranks with every vector
    # in, as a server (one configuration) has it moments after a backfill batch.
    settings.RECALL_BUILD_WAIT_SECONDS = None
    call_command("migrate", verbosity=0)
    assert startup_run(), "runtime did not start"
    if get_embedder() is None:
        print("warning: embedding model unavailable; vector rows will equal BM25 rows", file=sys.stderr)
    client = Client(HTTP_HOST="127.0.0.1")  # the host guard admits loopback names only
    table: dict[str, dict[str, float]] = {}
    counts: dict[str, int] = {}
    timings: list[float] = []
    raw_table: dict[str, dict[str, float]] = {}
    reflection_table: dict[str, dict[str, float]] = {}
    for set_name in args.sets:
        root = work / "neko" / set_name
        id_maps, probes = write_neko_dir(root, set_name)
        call_command("import_memory", str(root), stdout=open(os.devnull, "w"))  # noqa: SIM115
        for conv_id in id_maps:
            character = Character.objects.get(name=conv_id)
            embedding_backfill(character_id=character.pk, queue_pairs=False)
        scores: dict[str, list[float]] = defaultdict(list)
        misses: list[dict] = []
        for conv_id, conv_probes in probes.items():
            for probe in conv_probes:
                evidence = set(probe["evidence_turn_ids"])
                for config, _ in [*ROWS, *VARIANT_ROWS]:
                    started = time.perf_counter()
                    response = client.post(
                        f"/query_memory/{conv_id}?config={config}&explain=1",
                        data=json.dumps({"query": probe["question"]}),
                        content_type="application/json",
                    )
                    timings.append(time.perf_counter() - started)
                    body = response.json()
                    assert response.status_code == 200 and "error_code" not in body, body
                    got = {id_maps[conv_id].get(r["id"]) for r in body["results"]}
                    scores[config].append(len(evidence & got) / len(evidence))
                    if args.misses and config == "nekomem" and not evidence <= got:
                        misses.append(
                            recall_misses.miss_record(
                                conv_id, probe, body["results"], id_maps[conv_id], set_name=set_name
                            )
                        )
        if args.misses:
            recall_misses.write_misses(args.misses, set_name, misses, probes=counts_of(probes))
        table[set_name] = {c: sum(v) / len(v) for c, v in scores.items()}
        counts[set_name] = len(scores["nekomem"])
        if not args.no_raw:
            raw_table[set_name] = raw_turn_recall(client, work / "raw" / set_name, set_name, probes)
        if not args.no_reflections:
            reflection_table[set_name] = reflection_recall(
                client, work / "reflections" / set_name, set_name, probes
            )

    width = 44
    print(f"\nrecall@8 via POST /query_memory (model: {getattr(get_embedder(), 'model_id', 'none')})\n")
    head = f"{'configuration':<{width}}" + "".join(f"{s[:15]:>16}" for s in args.sets) + f"{'mean':>8}"
    print(head)
    print(f"{'(probes)':<{width}}" + "".join(f"{counts[s]:>16}" for s in args.sets))
    print("-" * len(head))
    means: dict[str, float] = {}
    for config, label in [*ROWS, *VARIANT_ROWS, ("mem0", "Mem0 OSS 2.2.1 (peer, published)")]:
        values = [MEM0[s] if config == "mem0" else table[s][config] for s in args.sets]
        means[config] = sum(values) / len(values)
        print(f"{label:<{width}}" + "".join(f"{v:>16.3f}" for v in values) + f"{means[config]:>8.3f}")
    print()
    gain = means["nekomem"] - means["original"]
    verdict = "OK" if gain >= 0.08 else "MISS"
    print(f"default − original (mean over sets): {gain:+.3f}  (target ≥ +0.080) {verdict}")
    for s in args.sets:
        best_single = max(table[s][c] for c in ("bm25", "bm25-nekomem", "vectors"))
        ours = table[s]["nekomem"]
        single = "OK" if ours >= best_single - 1e-9 else "MISS"
        peer = "OK" if ours >= MEM0[s] - 1e-9 else "MISS"
        print(f"{s:<16} default {ours:.3f}  best single path {best_single:.3f} {single}", end="")
        print(f"  Mem0 {MEM0[s]:.3f} {peer}")
    if raw_table:
        print(
            "\nrecall@8, the raw-turn pool alone (turns in the raw log, no fact extracted)"
            " vs the same turns as facts\n"
        )
        print(
            f"{'pool (configuration)':<{width}}"
            + "".join(f"{s[:15]:>16}" for s in args.sets)
            + f"{'mean':>8}"
        )
        for label, source, config in (
            ("raw turns (nekomem default)", raw_table, "nekomem"),
            ("facts (nekomem default)", table, "nekomem"),
            ("raw turns (BM25, nekomem views)", raw_table, "bm25-nekomem"),
            ("facts (BM25, nekomem views)", table, "bm25-nekomem"),
            ("raw turns (vectors only)", raw_table, "vectors"),
            ("facts (vectors only)", table, "vectors"),
        ):
            values = [source[s][config] for s in args.sets]
            print(
                f"{label:<{width}}"
                + "".join(f"{v:>16.3f}" for v in values)
                + f"{sum(values) / len(values):>8.3f}"
            )
    if reflection_table:
        print(
            "\nrecall@8, the reflection pool alone (each turn a confirmed reflection) vs the same as facts\n"
        )
        print(
            f"{'pool (configuration)':<{width}}"
            + "".join(f"{s[:15]:>16}" for s in args.sets)
            + f"{'mean':>8}"
        )
        for label, source, config in (
            ("reflections, no vectors (default)", reflection_table, "before:nekomem"),
            ("reflections, vectors (default)", reflection_table, "nekomem"),
            ("reflections (BM25, nekomem views)", reflection_table, "bm25-nekomem"),
            ("reflections (vectors only)", reflection_table, "vectors"),
            ("facts (nekomem default)", table, "nekomem"),
        ):
            values = [source[s][config] for s in args.sets]
            print(
                f"{label:<{width}}"
                + "".join(f"{v:>16.3f}" for v in values)
                + f"{sum(values) / len(values):>8.3f}"
            )
    if args.locales:
        locale_table(client, work / "locales", args.locales, width)
    timings.sort()
    p50 = timings[len(timings) // 2] * 1000
    print(f"\nin-process request time: p50 {p50:.1f} ms over {len(timings)} requests")


def counts_of(probes: dict[str, list[dict]]) -> int:
    return sum(len(v) for v in probes.values())


def locale_table(client, root: Path, locales: list[str], width: int) -> None:
    """recall@8 on the hand-written locale sets, per configuration, and on their time probes alone."""
    from django.core.management import call_command
    from django.utils import timezone

    from nekomem.characters.models import Character
    from recall.backfill import embedding_backfill

    today = timezone.localtime().date()
    rows: dict[str, dict[str, float]] = {}
    for locale in locales:
        data = locale_sets.load(locale, today=today)
        name = f"recall-set-{locale}"
        folder = root / locale / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "facts.json").write_text(json.dumps(data.facts(), ensure_ascii=False), encoding="utf-8")
        call_command("import_memory", str(root / locale), stdout=open(os.devnull, "w"))  # noqa: SIM115
        embedding_backfill(character_id=Character.objects.get(name=name).pk, queue_pairs=False)
        scores: dict[str, list[float]] = defaultdict(list)
        for probe in data.probes:
            evidence = data.evidence_ids(probe)
            for config, _ in ROWS:
                response = client.post(
                    f"/query_memory/{name}?config={config}",
                    data=json.dumps(locale_sets.probe_body(probe)),
                    content_type="application/json",
                )
                body = response.json()
                assert response.status_code == 200 and "error_code" not in body, body
                got = {r["id"] for r in body["results"][: locale_sets.TOP_K]}
                score = len(evidence & got) / len(evidence)
                scores[config].append(score)
                if probe.timed and config == "nekomem":
                    scores["timed"].append(score)
        rows[locale] = {c: sum(v) / len(v) for c, v in scores.items()}
    columns = [*(c for c, _ in ROWS), "timed"]
    print("\nrecall@8 on the hand-written locale sets (tests/fixtures/recall_sets; 30 probes each)\n")
    print(f"{'locale':<{width // 3}}" + "".join(f"{c[:13]:>14}" for c in columns))
    for locale, row in rows.items():
        print(f"{locale:<{width // 3}}" + "".join(f"{row[c]:>14.3f}" for c in columns))
    print(f"({'timed'}: the ten probes that name a time, nekomem default, question passed as time)")


def raw_turn_recall(client, root: Path, set_name: str, probes: dict[str, list[dict]]) -> dict[str, float]:
    """recall@8 of the raw-turn pool alone: each conversation imported as its raw log only."""
    from django.core.management import call_command

    from nekomem.characters.models import Character
    from recall.backfill import embedding_backfill
    from recent.models import RawMessage

    conversations = write_raw_dir(root, set_name)
    call_command("import_memory", str(root), stdout=open(os.devnull, "w"))  # noqa: SIM115
    scores: dict[str, list[float]] = defaultdict(list)
    for conv_id in conversations:
        name = f"{conv_id}_raw"
        # No fact extracted: the backfill embeds the uncovered turns themselves.
        embedding_backfill(character_id=Character.objects.get(name=name).pk, queue_pairs=False)
        turn_of = {
            f"raw_{pk}": session
            for pk, session in RawMessage.objects.filter(character__name=name).values_list("pk", "session_id")
        }
        for probe in probes.get(conv_id, []):
            evidence = set(probe["evidence_turn_ids"])
            for config in ("nekomem", "bm25-nekomem", "vectors"):
                response = client.post(
                    f"/query_memory/{name}?config={config}",
                    data=json.dumps({"query": probe["question"]}),
                    content_type="application/json",
                )
                body = response.json()
                assert response.status_code == 200 and "error_code" not in body, body
                got = {turn_of.get(r["id"]) for r in body["results"]}
                scores[config].append(len(evidence & got) / len(evidence))
    return {c: sum(v) / len(v) for c, v in scores.items()}


def write_reflection_dir(root: Path, set_name: str) -> dict[str, dict[str, str]]:
    """ROOT/<conv>_refl/reflections.json per conversation: each turn a confirmed reflection (its text
    as the fact would say it); returns {character: {reflection id: turn id}}."""
    convs: dict[str, list[dict]] = defaultdict(list)
    for turn in shared_data.turns(set_name):
        convs[turn["conv_id"]].append(turn)
    id_maps: dict[str, dict[str, str]] = {}
    for conv_id, rows in convs.items():
        entries, id_map = [], {}
        for turn in sorted(rows, key=lambda t: t["idx"]):
            text = fact_text(turn)
            digest = hashlib.sha256(f"{conv_id}\0{turn['turn_id']}\0{text}".encode()).hexdigest()
            reflection_id = f"ref_{digest[:16]}"
            id_map[reflection_id] = turn["turn_id"]
            when = datetime.fromisoformat(turn["timestamp"]).isoformat()
            entries.append(
                {
                    "id": reflection_id,
                    "text": text,
                    "entity": "master",
                    "status": "confirmed",
                    "source_fact_ids": [],
                    "created_at": when,
                    "event_start_at": when,
                    "schema_version": 2,
                }
            )
        folder = root / f"{conv_id}_refl"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "reflections.json").write_text(json.dumps(entries, ensure_ascii=False), encoding="utf-8")
        id_maps[f"{conv_id}_refl"] = id_map
    return id_maps


def reflection_recall(client, root: Path, set_name: str, probes: dict[str, list[dict]]) -> dict[str, float]:
    """recall@8 of the reflection pool alone, before the backfill embedded it ("before:<config>") and
    after: what the reflection vectors change."""
    from django.core.management import call_command

    from nekomem.characters.models import Character
    from recall.backfill import embedding_backfill

    id_maps = write_reflection_dir(root, set_name)
    call_command("import_memory", str(root), stdout=open(os.devnull, "w"))  # noqa: SIM115
    scores: dict[str, list[float]] = defaultdict(list)

    def ask(name: str, conv_id: str, configs: tuple[str, ...], prefix: str) -> None:
        for probe in probes.get(conv_id, []):
            evidence = set(probe["evidence_turn_ids"])
            for config in configs:
                response = client.post(
                    f"/query_memory/{name}?config={config}",
                    data=json.dumps({"query": probe["question"]}),
                    content_type="application/json",
                )
                body = response.json()
                assert response.status_code == 200 and "error_code" not in body, body
                got = {id_maps[name].get(r["id"]) for r in body["results"]}
                scores[prefix + config].append(len(evidence & got) / len(evidence))

    for name in id_maps:
        conv_id = name.removesuffix("_refl")
        ask(name, conv_id, ("nekomem",), "before:")
        embedding_backfill(character_id=Character.objects.get(name=name).pk, queue_pairs=False)
        ask(name, conv_id, ("nekomem", "bm25-nekomem", "vectors"), "")
    return {c: sum(v) / len(v) for c, v in scores.items()}


if __name__ == "__main__":
    main()
