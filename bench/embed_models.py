"""Compare the local embedding profiles on the development data: vectors-only recall and speed.

    .venv/bin/python bench/embed_models.py [--sets locomo10 ...] [--k 8] [--with-speaker]

Each turn of a conversation is one document; each probe question is ranked against its own
conversation's turns by cosine. recall@k is the fraction of a probe's ``evidence_turn_ids`` found in the
top k, averaged over probes with evidence. "fused" is the mean of the two models' cosines, which is what
the ``fused-muse-minilm`` profile stores as one vector. Prints a table; nothing is tuned here.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nekomem.settings")

from django.conf import settings

from bench import shared_data
from nekomem.embeddings import Embedder, EmbeddingUnavailable
from nekomem.embeddings.profiles import MINILM_L6_INT8, MUSE_V3_INT8

MODELS = [MUSE_V3_INT8.name, MINILM_L6_INT8.name]
# The original's cosine cut-off (reference §4.4) was set for another model; shown to check calibration.
DEFAULT_THRESHOLD = 0.3


@dataclass
class Conversation:
    turn_ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    probes: list[tuple[str, set[str]]] = field(default_factory=list)


def load_set(name: str, with_speaker: bool) -> dict[str, Conversation]:
    convs: dict[str, Conversation] = defaultdict(Conversation)
    for turn in sorted(shared_data.turns(name), key=lambda t: (t["conv_id"], t["idx"])):
        conv = convs[turn["conv_id"]]
        conv.turn_ids.append(turn["turn_id"])
        text = turn["text"]
        conv.texts.append(f"{turn['speaker']}: {text}" if with_speaker else text)
    for probe in shared_data.probes(name):
        if probe["evidence_turn_ids"] and probe["conv_id"] in convs:
            convs[probe["conv_id"]].probes.append((probe["question"], set(probe["evidence_turn_ids"])))
    return dict(convs)


@dataclass
class Scores:
    recall: list[float] = field(default_factory=list)  # recall@k per probe
    recall4: list[float] = field(default_factory=list)  # recall@4: the cosine path's share of hybrid recall
    recall_thr: list[float] = field(default_factory=list)  # recall@k keeping only cosine >= threshold
    gold_cos: list[float] = field(default_factory=list)  # cosine of each evidence turn


def score(sims: np.ndarray, conv: Conversation, k: int, threshold: float, into: Scores) -> None:
    """``sims``: probes × turns cosine matrix for one conversation."""
    index = {tid: i for i, tid in enumerate(conv.turn_ids)}
    for row, (_, evidence) in zip(sims, conv.probes, strict=True):
        order = np.argsort(-row, kind="stable")
        gold = {index[t] for t in evidence if t in index}
        if not gold:
            continue
        top_k, top_4 = set(order[:k].tolist()), set(order[:4].tolist())
        above = {i for i in top_k if row[i] >= threshold}
        into.recall.append(len(gold & top_k) / len(gold))
        into.recall4.append(len(gold & top_4) / len(gold))
        into.recall_thr.append(len(gold & above) / len(gold))
        into.gold_cos.extend(float(row[i]) for i in gold)


def run(args: argparse.Namespace) -> None:
    model_dir = Path(args.model_dir or settings.EMBEDDING_MODEL_DIR)
    embedders: dict[str, Embedder] = {}
    for name in MODELS:
        try:
            embedders[name] = Embedder.load(name, model_dir, threads=args.threads)
        except EmbeddingUnavailable as exc:
            print(f"skipping {name}: {exc}")
    if not embedders:
        sys.exit("no model available: run python -m nekomem.embeddings.fetch")
    profiles = [*embedders, "fused"] if len(embedders) == 2 else list(embedders)

    rows: list[tuple] = []
    speed: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for set_name in args.sets:
        convs = load_set(set_name, args.with_speaker)
        scores = {p: Scores() for p in profiles}
        random_recall: list[float] = []
        for conv in convs.values():
            if not conv.probes:
                continue
            sims: dict[str, np.ndarray] = {}
            for name, embedder in embedders.items():
                started = time.perf_counter()
                docs = embedder.embed(conv.texts)
                speed[name].append((len(conv.texts), time.perf_counter() - started))
                queries = embedder.embed([q for q, _ in conv.probes])
                sims[name] = queries @ docs.T
            if "fused" in profiles:
                sims["fused"] = (sims[MUSE_V3_INT8.name] + sims[MINILM_L6_INT8.name]) / 2
            for profile in profiles:
                score(sims[profile], conv, args.k, args.threshold, scores[profile])
            random_recall.extend([min(1.0, args.k / len(conv.texts))] * len(conv.probes))
        n_probes = len(scores[profiles[0]].recall)
        for profile in profiles:
            s = scores[profile]
            rows.append(
                (
                    set_name,
                    profile,
                    n_probes,
                    np.mean(s.recall),
                    np.mean(s.recall4),
                    np.mean(s.recall_thr),
                    np.median(s.gold_cos),
                )
            )
        rows.append((set_name, "(random)", n_probes, np.mean(random_recall), None, None, None))

    k = args.k
    thr_col = f"R@{k}≥{args.threshold:g}"
    header = (
        f"{'set':<16} {'profile':<16} {'probes':>6} {f'R@{k}':>6} {'R@4':>6} {thr_col:>8} {'gold cos':>8}"
    )
    print(header)
    print("-" * len(header))
    previous = None
    for set_name, profile, n, r, r4, rthr, gcos in rows:
        if previous and previous != set_name:
            print()
        previous = set_name

        def cell(x: float | None, width: int) -> str:
            return f"{x:>{width}.3f}" if x is not None else f"{'':>{width}}"

        print(f"{set_name:<16} {profile:<16} {n:>6} {r:>6.3f} {cell(r4, 6)} {cell(rthr, 8)} {cell(gcos, 8)}")
    # Macro average over sets, so one big set does not dominate the choice.
    print()
    for profile in profiles:
        per_set = [r for _, p, _, r, *_ in rows if p == profile]
        print(f"mean R@{k} over {len(per_set)} sets  {profile:<16} {np.mean(per_set):.3f}")
    print()
    for name, runs in speed.items():
        n = sum(c for c, _ in runs)
        secs = sum(t for _, t in runs)
        print(
            f"throughput {name:<16} {n / secs:>7.0f} turns/s ({n} turns, {args.threads or 'default'} threads)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=list(shared_data.SETS), choices=shared_data.SETS)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD, help="cosine cut-off column")
    parser.add_argument("--model-dir", default=None)
    parser.add_argument("--with-speaker", action="store_true", help="prefix each turn with its speaker")
    run(parser.parse_args())


if __name__ == "__main__":
    main()
