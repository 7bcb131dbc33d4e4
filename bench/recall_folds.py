"""Recall mechanisms judged on conversations they were not chosen on (issue 50).

    .venv/bin/python bench/recall_folds.py [--sets ...] [--folds 3] [--layout bench|original]
                                          [--speed] [--write-results]

Every development set (``shared_data``) is imported as ``bench/recall_eval.py`` imports it (one character a
conversation, ``manage.py import_memory``, the embedding backfill), or with ``--layout original`` as an
original memory folder carries it (``original_folder.py``: ``facts.json`` as the original writes it, every
fact about ``master``; the raw log; ``recent.json``). Every probe is asked through ``POST /query_memory``
(Django test client) under the default and, for each mechanism that is a ``RecallConfig`` switch, its "off"
configuration and the values of its parameter on a small grid (registered in this process only).
``--layout raw`` imports each conversation as its raw log alone (``recall_eval.write_raw_dir``): a live
chat before any extraction, the only pool whose rows know their speakers (what the reply context pairs).

The set's conversations are split into ``--folds`` folds (by a hash of the conversation id; a set with fewer
conversations than folds is split by probe instead, and labelled so). For every fold in turn a mechanism's
held-back gain is recall@8 on that fold with the mechanism on minus off: with the default's value (a
mechanism the default has off is switched on with its ``on`` fields), and "tuned" with the grid value
that did best on the other folds. The table gives each set's mean and
spread (sample standard deviation over folds, and the range) and the mean over sets. ``--speed`` adds the
``/query_memory`` p50/p95 at 100k facts of each "off" configuration against the default
(``bench/recall_speed.py --configs``, on this shared machine a noisy number).

``--write-results`` puts the folded table into ``docs/recall-results.md`` (its own section, with the commit,
date and command; ``bench/recall_eval.py --write-results`` keeps that section).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import original_folder, recall_eval, recall_misses, shared_data


@dataclass(frozen=True)
class Mechanism:
    key: str
    label: str
    off: dict[str, Any]  # the fields that switch it off
    param: str | None = None  # the tuned field, if any
    grid: tuple[Any, ...] = ()
    # The fields that switch it on, for a mechanism the default has off (measured all the same: what it
    # would buy is why it is off).
    on: tuple[tuple[str, Any], ...] = ()


MECHANISMS = (
    Mechanism("context", "reply context", {"context_weight": 0.0}, "context_weight", (0.4, 0.8, 1.2)),
    Mechanism(
        "feedback",
        "feedback terms (RM3)",
        {"feedback_docs": 0},
        "feedback_weight",
        (0.3, 0.5, 0.8),
        on=(("feedback_docs", 3),),
    ),
    Mechanism(
        "qwords",
        "question words out of the query",
        {"question_words_out": False},
        on=(("question_words_out", True),),
    ),
    Mechanism("when", "when-question bonus", {"when_bonus": 0.0}, "when_bonus", (0.15, 0.3, 0.6)),
    Mechanism(
        "vectors", "vector path (weight)", {"use_vectors": False}, "vector_weight", (0.6, 0.8, 1.0, 1.2)
    ),
    # Not a RecallConfig switch but the embedding profile: "on" is the same probes asked in a second
    # process whose vectors are fused-muse-minilm (``--fused``), "off" the default profile of this one.
    Mechanism("fused", "fused profile (fused-muse-minilm vs default)", {}),
    Mechanism("mix", "per-language mix (fused profiles only)", {"vector_mix": "first"}),
)
FUSED_PROFILE = "fused-muse-minilm"


def register_configs() -> tuple[list[str], dict[str, str], dict[str, str], dict[tuple[str, Any], str]]:
    """Adds the on, off and grid configurations of every mechanism to ``CONFIGS`` (this process only).

    Returns every configuration name to ask, {mechanism: on name}, {mechanism: off name}, {(mechanism,
    value): name}; a mechanism whose fields the engine does not have is left out."""
    from recall.engine.configs import CONFIGS, DEFAULT

    fields = {f.name for f in dataclasses.fields(DEFAULT)}
    names = [DEFAULT.name]
    on: dict[str, str] = {}
    off: dict[str, str] = {}
    grid: dict[tuple[str, Any], str] = {}
    for m in MECHANISMS:
        if not m.off:
            continue
        if not set(m.off) | dict(m.on).keys() <= fields or (m.param and m.param not in fields):
            print(f"warning: {m.label}: no such RecallConfig field, skipped", file=sys.stderr)
            continue
        base = dataclasses.replace(DEFAULT, **dict(m.on))
        on[m.key] = DEFAULT.name
        if base != DEFAULT:
            on[m.key] = f"folds-{m.key}-on"
            CONFIGS[on[m.key]] = dataclasses.replace(base, name=on[m.key])
            names.append(on[m.key])
        name = f"folds-{m.key}-off"
        CONFIGS[name] = dataclasses.replace(DEFAULT, name=name, **m.off)
        off[m.key] = name
        names.append(name)
        for value in m.grid:
            if m.param is None:
                continue
            if getattr(base, m.param) == value:
                grid[(m.key, value)] = on[m.key]
                continue
            name = f"folds-{m.key}-{value}"
            CONFIGS[name] = dataclasses.replace(base, name=name, **{m.param: value})
            grid[(m.key, value)] = name
            names.append(name)
    return names, on, off, grid


def raw_turn_maps(set_name: str, convs: list[str]) -> tuple[dict[str, dict[str, str]], dict[str, list[dict]]]:
    """For the raw layout (``recall_eval.write_raw_dir``: each conversation its raw log only, as a live
    chat stands before any extraction, every turn with its speaker's role): {character: {raw row id:
    turn id}} (the turn id is kept in the row's session id) and the probes under those character names."""
    from recent.models import RawMessage

    id_maps: dict[str, dict[str, str]] = {}
    for conv_id in convs:
        name = f"{conv_id}_raw"
        rows = RawMessage.objects.filter(character__name=name).values_list("pk", "session_id")
        id_maps[name] = {f"raw_{pk}": session for pk, session in rows}
    probes: dict[str, list[dict]] = defaultdict(list)
    for probe in shared_data.probes(set_name):
        if probe["evidence_turn_ids"] and probe["conv_id"] in convs:
            probes[f"{probe['conv_id']}_raw"].append(probe)
    return id_maps, probes


def fold_of(key: str, k: int) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % k


def assign_folds(convs: list[str], probe_ids: list[tuple[str, str]], k: int) -> tuple[dict, str]:
    """{(conv, probe): fold} and how it was split: by conversation (round-robin over the conversations in
    hash order, so no fold is empty) or, with fewer conversations than folds, by probe."""
    if len(convs) >= k:
        order = sorted(convs, key=lambda c: hashlib.sha256(c.encode()).hexdigest())
        conv_fold = {c: i % k for i, c in enumerate(order)}
        return {p: conv_fold[p[0]] for p in probe_ids}, "conversation"
    return {p: fold_of(f"{p[0]}\0{p[1]}", k) for p in probe_ids}, "probe"


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def fold_gains(
    scores: dict[tuple[str, str], dict[str, float]],
    folds: dict[tuple[str, str], int],
    k: int,
    on: str,
    off: str,
    grid: dict[Any, str],
) -> tuple[list[float], list[float], list[Any]]:
    """Per fold: gain of the default value, gain of the value chosen on the other folds, that value."""
    shipped, tuned, chosen = [], [], []
    for fold in range(k):
        held = [p for p in scores if folds[p] == fold]
        rest = [p for p in scores if folds[p] != fold]
        if not held:
            continue
        shipped.append(mean([scores[p][on] - scores[p][off] for p in held]))
        if grid:
            # Ties go to the default's value, then to the smaller value (the order of the grid).
            best = max(
                grid,
                key=lambda v: (round(mean([scores[p][grid[v]] for p in rest]), 9), grid[v] == on),
            )
            chosen.append(best)
            tuned.append(mean([scores[p][grid[best]] - scores[p][off] for p in held]))
    return shipped, tuned, chosen


def spread(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean(values):+.3f} ± {sd:.3f} [{min(values):+.3f}, {max(values):+.3f}]"


def run(args: argparse.Namespace) -> str:
    work = args.keep or Path(tempfile.mkdtemp(prefix="nekomem-recall-folds-"))
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

    settings.RECALL_BUILD_WAIT_SECONDS = None  # as in recall_eval: every query ranks with every vector
    call_command("migrate", verbosity=0)
    assert startup_run(), "runtime did not start"
    names, on_names, off, grid = register_configs()
    if args.only_default:
        names = [names[0]]
    client = Client(HTTP_HOST="127.0.0.1")
    per_set: dict[str, dict[tuple[str, str], dict[str, float]]] = {}
    split: dict[str, tuple[dict, str, int]] = {}
    for set_name in args.sets:
        root = work / args.layout / set_name
        if args.layout == "original":
            id_maps, probes = original_folder.write_original_dir(root, set_name)
        elif args.layout == "raw":
            id_maps, probes = {c: {} for c in recall_eval.write_raw_dir(root, set_name)}, {}
        else:
            id_maps, probes = recall_eval.write_neko_dir(root, set_name)
        call_command("import_memory", str(root), stdout=open(os.devnull, "w"))  # noqa: SIM115
        if args.layout == "raw":
            id_maps, probes = raw_turn_maps(set_name, list(id_maps))
        for conv_id in id_maps:
            embedding_backfill(character_id=Character.objects.get(name=conv_id).pk, queue_pairs=False)
        scores: dict[tuple[str, str], dict[str, float]] = {}
        for conv_id, conv_probes in probes.items():
            for probe in conv_probes:
                evidence = set(probe["evidence_turn_ids"])
                row = {}
                for config in names:
                    response = client.post(
                        f"/query_memory/{conv_id}?config={config}",
                        data=json.dumps({"query": probe["question"]}),
                        content_type="application/json",
                    )
                    body = response.json()
                    assert response.status_code == 200 and "error_code" not in body, body
                    got = {original_folder.turn_of(r, id_maps[conv_id]) for r in body["results"]}
                    row[config] = len(evidence & got) / len(evidence)
                scores[(conv_id, probe["probe_id"])] = row
        per_set[set_name] = scores
        folds, how = assign_folds(list(id_maps), list(scores), args.folds)
        split[set_name] = (folds, how, len(id_maps))
        print(f"{set_name}: {len(scores)} probes asked under {len(names)} configurations", file=sys.stderr)

    if args.dump:
        args.dump.write_text(
            json.dumps({s: {"\0".join(p): r for p, r in v.items()} for s, v in per_set.items()}),
            encoding="utf-8",
        )
    if args.only_default:
        return ""
    if args.fused:
        fused = fused_scores(args, work)
        for set_name, scores in per_set.items():
            for key, row in scores.items():
                row["fused-profile"] = fused[set_name][key]["nekomem"]
        off["fused"] = "fused-profile"

    lines: list[str] = []
    model = getattr(get_embedder(), "model_id", "none")
    lines.append(
        f"recall@8 held back, {args.folds} folds, layout '{args.layout}' (model: {model}); gain = on − off,"
        " mean ± sd over folds [min, max]"
    )
    lines.append("")
    lines.append("default configuration, recall@8 per set:")
    for set_name, scores in per_set.items():
        folds, how, n_convs = split[set_name]
        lines.append(
            f"  {set_name:<16} {mean([r['nekomem'] for r in scores.values()]):.3f}"
            f"  ({len(scores)} probes, {n_convs} conversations, folds by {how})"
        )
    speed = speed_columns(off, args) if args.speed else {}
    for m in MECHANISMS:
        if m.key not in off:
            continue
        m_grid = {v: grid[(m.key, v)] for v in m.grid if (m.key, v) in grid}
        lines.append("")
        title = f"{m.label}: off = {', '.join(f'{k}={v}' for k, v in m.off.items()) or 'default profile'}"
        if m.on:
            title += f"; on = {', '.join(f'{k}={v}' for k, v in m.on)} (off by default)"
        if m.param:
            title += f"; tuned: {m.param} in {list(m.grid)}"
        lines.append(title)
        head = f"  {'set':<16} {'folds':>9} {'gain, on − off':>38}"
        if m_grid:
            head += f" {'gain tuned on other folds':>38}  chosen"
        lines.append(head)
        shipped_means, tuned_means = [], []
        for set_name, scores in per_set.items():
            folds, how, _ = split[set_name]
            on, off_name = ("fused-profile", "nekomem") if m.key == "fused" else (on_names[m.key], off[m.key])
            shipped, tuned, chosen = fold_gains(scores, folds, args.folds, on, off_name, m_grid)
            shipped_means.append(mean(shipped))
            line = f"  {set_name:<16} {f'{len(shipped)} {how[:4]}':>9} {spread(shipped):>38}"
            if m_grid:
                tuned_means.append(mean(tuned))
                line += f" {spread(tuned):>38}  {','.join(str(v) for v in chosen)}"
            lines.append(line)
        line = f"  {'mean over sets':<16} {'':>9} {mean(shipped_means):>+38.3f}"
        if m_grid:
            line += f" {mean(tuned_means):>+38.3f}"
        lines.append(line)
        if m.key in speed:
            lines.append(f"  /query_memory at 100k facts, on vs off: {speed[m.key]}")
    if not args.speed:
        lines.append("")
        lines.append("(latency: not measured in this run; bench/recall_speed.py --configs, or --speed)")
    text = "\n".join(lines)
    print(text)
    return text


def fused_scores(args: argparse.Namespace, work: Path) -> dict[str, dict[tuple[str, str], dict[str, float]]]:
    """The default configuration's per-probe recall with the fused embedding profile (its own process:
    the profile is read at start)."""
    dump = work / "fused-scores.json"
    command = [sys.executable, __file__, "--only-default", "--dump", str(dump), "--layout", args.layout]
    command += ["--keep", str(work / "fused"), "--sets", *args.sets]
    env = dict(os.environ, NEKOMEM_EMBEDDING_PROFILE=FUSED_PROFILE)
    env.pop("DATABASE_URL", None)
    subprocess.run(command, env=env, check=True)
    loaded = json.loads(dump.read_text(encoding="utf-8"))
    return {s: {tuple(p.split("\0")): r for p, r in v.items()} for s, v in loaded.items()}  # type: ignore[misc]


def speed_columns(off: dict[str, str], args: argparse.Namespace) -> dict[str, str]:
    """p50/p95 of /query_memory at 100k facts per mechanism: ``bench/recall_speed.py --configs`` in its own
    process (it serves named configurations only, so the off rows are the named variants nearest to them)."""
    from recall.engine.configs import CONFIGS

    # The default's counterpart for each mechanism: off where the default has it on, on where it is off.
    named = {"context": "nekomem-no-context", "feedback": "nekomem-feedback", "when": "nekomem-no-when"}
    named |= {"qwords": "nekomem-question-words-out", "vectors": "bm25-nekomem", "fused": "nekomem-muse"}
    configs = ["default", *sorted({v for k, v in named.items() if k in off and v in CONFIGS})]
    command = [
        sys.executable,
        str(Path(__file__).with_name("recall_speed.py")),
        "--sizes",
        str(args.speed_size),
        "--configs",
        *configs,
    ]
    print("$ " + " ".join(command), file=sys.stderr)
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    print(done.stdout[-4000:], file=sys.stderr)
    found: dict[str, str] = {}
    rows = parse_speed(done.stdout)
    base = rows.get("default") or rows.get("nekomem")
    for key, name in named.items():
        if name in rows and base:
            found[key] = f"p50 / p95 {base} default vs {rows[name]} ({name})"
    return found


def parse_speed(output: str) -> dict[str, str]:
    """{configuration: 'p50 / p95 ms'} from recall_speed's table (``facts configuration p50 p95 ...``)."""
    rows: dict[str, str] = {}
    for line in output.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[0].isdigit():
            try:
                rows[parts[1]] = f"{float(parts[2]):.1f} / {float(parts[3]):.1f} ms"
            except ValueError:
                continue
    return rows


def write_section(text: str, args: argparse.Namespace) -> None:
    commit = recall_misses._git("rev-parse", "--short", "HEAD")
    dirty = recall_misses._git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs")
    from datetime import UTC, datetime

    command = "NEKOMEM_SHARED_DATA=../shared/data .venv/bin/python bench/recall_folds.py --write-results"
    command += f" --folds {args.folds} --layout {args.layout}" + (" --speed" if args.speed else "")
    if list(args.sets) != list(shared_data.SETS):
        command += " --sets " + " ".join(args.sets)
    section = "\n".join(
        [
            f"## Held back: each mechanism on conversations it was not chosen on (layout '{args.layout}')",
            "",
            "Written by `bench/recall_folds.py --write-results`;"
            " `bench/recall_eval.py --write-results` keeps it.",
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
    recall_misses.write_section(f"folds-{args.layout}", section)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(shared_data.SETS), choices=shared_data.SETS)
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--layout", choices=("bench", "original", "raw"), default="bench")
    parser.add_argument("--keep", type=Path, help="work directory to keep (default: a temporary one)")
    parser.add_argument("--speed", action="store_true", help="add recall_speed.py's latency per mechanism")
    parser.add_argument("--speed-size", type=int, default=100_000)
    parser.add_argument("--fused", action="store_true", help=f"add the {FUSED_PROFILE} profile (2nd process)")
    parser.add_argument("--only-default", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--dump", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--write-results", action="store_true", help="write the table into the results file")
    args = parser.parse_args()
    text = run(args)
    if args.write_results:
        write_section(text, args)


if __name__ == "__main__":
    main()
