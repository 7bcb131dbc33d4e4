"""The hybrid recall engine (reference §4.3–4.5): pure functions and plain records, no ORM.

A ``RecallIndex`` is built once per character from plain ``Candidate`` rows (facts, archived facts, and
later reflections: a new pool is one more list of candidates) and answers queries under a named
``RecallConfig``:

- ``ORIGINAL`` reproduces the original server: its tokenizer, BM25 (Lucene IDF, k1 1.5, b 0.75,
  threshold 0.1), cosine ≥ 0.3, top 4 of each path, RRF k 60, cap 8.
- ``DEFAULT`` is nekomem's: wider candidate lists, the improved tokenizer beside the original one (a
  second lexical view catches what folding/stemming loses and the other way round), per-path weights and
  a cosine threshold fitted to MUSE. Chosen by ``bench/recall_eval.py`` over all five development sets.

BM25 is scored by ``bm25s`` (sparse, precomputed) rather than a Python loop over documents. bm25s' Lucene
variant leaves out the ``(k1 + 1)`` numerator factor; we multiply it back so scores (and the 0.1 threshold)
are on the original's scale — the ranking is the same either way.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np

from nekomem.textproc import recall_tokens, search_tokens
from nekomem.timewindows import TimeWindow

logger = logging.getLogger(__name__)
# bm25s forces its logger to DEBUG on import and logs every index build; one index per character makes
# that noise, so it is set back once bm25s is imported (in ``Bm25View``).
_BM25S_LOG_LEVEL = logging.INFO

BM25_K1 = 1.5
BM25_B = 0.75
EXACT_COSINE_ROWS = 20_000  # above this, cosine is coarse-then-exact (see RecallIndex.__init__)
COARSE_DIM = 64
RESCORE_ROWS = 1000
RESULT_CAP = 8  # HYBRID_RECALL_BUDGET_TOTAL: results never exceed it, whatever the configuration

# Lexical views: a name → tokenizer(text, stop_names). Adding a view here makes it available to configs.
Tokenizer = Callable[[str, Sequence[str]], list[str]]
LEXICAL_VIEWS: dict[str, Tokenizer] = {
    "original": lambda text, names: recall_tokens(text, names),
    "words": lambda text, names: search_tokens(text, names),
    "unigrams": lambda text, names: search_tokens(text, names, unigrams=True),
}

TIERS_BM25 = frozenset({"fact", "reflection", "fact_archive"})
TIERS_COSINE = frozenset({"fact", "reflection"})  # the archive is searched by BM25 and time only (§2.5)


@dataclass(frozen=True)
class Candidate:
    """One recallable row, whatever layer it comes from."""

    id: str
    text: str
    tier: str  # fact | reflection | fact_archive
    entity: str = "master"
    created_at: datetime | None = None
    event_start_at: datetime | None = None
    event_end_at: datetime | None = None
    vector: np.ndarray | None = None  # a valid unit vector of the current model, or None
    subject_kind: str | None = None
    subject_id: str | None = None
    scope: str | None = None
    evidence_score: float = 0.0

    def event_span(self) -> tuple[datetime, datetime] | None:
        """§4.5: [start, end]; one end alone stands for both; neither → created_at; else None."""
        start, end = self.event_start_at, self.event_end_at
        if start is None and end is None:
            start = end = self.created_at
        elif start is None:
            start = end
        elif end is None:
            end = start
        if start is None or end is None:
            return None
        return start, end


@dataclass(frozen=True)
class RecallConfig:
    """A named recall configuration; the benchmark compares them."""

    name: str
    lexical: tuple[tuple[str, float], ...]  # (view, RRF weight)
    vector_weight: float = 1.0
    per_path: int = 4  # candidates each path contributes to fusion
    rrf_k: int = 60
    bm25_threshold: float = 0.1  # on the original's scale
    cosine_threshold: float = 0.3
    total: int = RESULT_CAP
    use_vectors: bool = True
    use_lexical: bool = True
    # "rrf": Σ w/(k + rank) (the original). "score": Σ w·(score / best score of that path) over the union
    # of the paths' candidate lists, so a row strong in one path and present-but-lower in another keeps
    # both signals instead of getting 0 for "not in that top list".
    fusion: str = "rrf"


ORIGINAL = RecallConfig(name="original", lexical=(("original", 1.0),))
DEFAULT = RecallConfig(
    name="nekomem",
    lexical=(("words", 1.0), ("original", 0.3)),
    # Below the lexical total (1.3): MUSE is weak on long English chats (LoCoMo) and strong on Chinese
    # and paraphrase; anywhere in 0.7–0.9 gave the same picture on every development set.
    vector_weight=0.8,
    per_path=20,
    cosine_threshold=0.15,  # MUSE cosines run lower than the original model's (0.3 drops true hits)
    fusion="score",
)
# Single paths, for the benchmark's comparison rows.
BM25_ONLY = RecallConfig(name="bm25", lexical=(("original", 1.0),), per_path=RESULT_CAP, use_vectors=False)
BM25_NEKOMEM = replace(DEFAULT, name="bm25-nekomem", use_vectors=False)
VECTORS_ONLY = RecallConfig(
    name="vectors",
    lexical=(),
    per_path=RESULT_CAP,
    cosine_threshold=DEFAULT.cosine_threshold,
    use_lexical=False,
)
CONFIGS: dict[str, RecallConfig] = {
    c.name: c for c in (DEFAULT, ORIGINAL, BM25_ONLY, BM25_NEKOMEM, VECTORS_ONLY)
}


# ---------------------------------------------------------------------------------------------------------
# BM25
# ---------------------------------------------------------------------------------------------------------


class Bm25View:
    """One lexical view of a pool: tokenizer + a bm25s index (Lucene IDF)."""

    def __init__(self, tokenizer: Tokenizer, texts: Sequence[str], stop_names: Sequence[str]) -> None:
        import bm25s

        logging.getLogger("bm25s").setLevel(_BM25S_LOG_LEVEL)
        self.tokenizer = tokenizer
        self.stop_names = tuple(stop_names)
        vocab: dict[str, int] = {}
        ids: list[list[int]] = []
        for text in texts:
            ids.append([vocab.setdefault(tok, len(vocab)) for tok in tokenizer(text, self.stop_names)])
        self.vocab = vocab
        self.size = len(texts)
        self._bm25: Any = None
        if self.size and vocab:
            self._bm25 = bm25s.BM25(k1=BM25_K1, b=BM25_B, method="lucene")
            # An empty document still has to occupy its row so row numbers stay aligned with the pool.
            self._bm25.index((ids, {**vocab, "": len(vocab)}), show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """Scores of every row on the original's scale (0 where no query term occurs)."""
        if self._bm25 is None:
            return np.zeros(self.size, dtype=np.float32)
        # Query terms de-duplicated (§4.3); unknown terms contribute nothing.
        wanted = dict.fromkeys(self.tokenizer(query, self.stop_names))
        token_ids = [self.vocab[t] for t in wanted if t in self.vocab]
        if not token_ids:
            return np.zeros(self.size, dtype=np.float32)
        raw = self._bm25.get_scores(token_ids)
        return np.asarray(raw, dtype=np.float32) * np.float32(BM25_K1 + 1)


def bm25_reference_score(query: Sequence[str], doc: Sequence[str], corpus: Sequence[Sequence[str]]) -> float:
    """The original's formula written out (for tests): Σ idf·tf(k1+1)/(tf + k1(1−b+b·dl/avgdl))."""
    n_docs = len(corpus)
    avgdl = sum(len(d) for d in corpus) / n_docs
    total = 0.0
    for term in dict.fromkeys(query):
        n = sum(1 for d in corpus if term in d)
        tf = list(doc).count(term)
        if not tf:
            continue
        idf = math.log((n_docs - n + 0.5) / (n + 0.5) + 1)
        total += idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * len(doc) / avgdl))
    return total


# ---------------------------------------------------------------------------------------------------------
# Fusion
# ---------------------------------------------------------------------------------------------------------


def rrf_fuse(
    rankings: Mapping[str, Sequence[int]], *, k: int = 60, weights: Mapping[str, float] | None = None
) -> list[tuple[int, float]]:
    """Weighted reciprocal-rank fusion: Σ w/(k + rank), ranks 1-based; best first, ties by first seen."""
    fused: dict[int, float] = {}
    for path, rows in rankings.items():
        weight = (weights or {}).get(path, 1.0)
        for rank, row in enumerate(rows, start=1):
            fused[row] = fused.get(row, 0.0) + weight / (k + rank)
    order = sorted(fused.items(), key=lambda item: -item[1])  # stable: ties keep insertion order
    return order


def score_fuse(
    rankings: Mapping[str, Sequence[int]],
    scores: Mapping[str, np.ndarray],
    *,
    weights: Mapping[str, float] | None = None,
    floors: Mapping[str, float] | None = None,
) -> list[tuple[int, float]]:
    """Normalised score fusion over the union of the candidate lists: each path's score is mapped to
    [0, 1] between its floor and its best listed score, weighted and summed."""
    union = list(dict.fromkeys(row for rows in rankings.values() for row in rows))
    fused = dict.fromkeys(union, 0.0)
    for path, rows in rankings.items():
        if not rows:
            continue
        weight = (weights or {}).get(path, 1.0)
        floor = (floors or {}).get(path, 0.0)
        column = scores[path]
        top = float(column[rows[0]])
        span = max(top - floor, 1e-9)
        for row in union:
            fused[row] += weight * max(0.0, min(1.0, (float(column[row]) - floor) / span))
    return sorted(fused.items(), key=lambda item: -item[1])


def _top(scores: np.ndarray, allowed: np.ndarray, threshold: float, limit: int) -> list[int]:
    """Row numbers of the best ``limit`` scores ≥ threshold (and > 0) among allowed rows; ties by row."""
    keep = np.flatnonzero(allowed & (scores >= threshold) & (scores > 0))
    if keep.size == 0 or limit <= 0:
        return []
    if keep.size > limit:
        # Partial selection first: sorting every matching row costs more than scoring them at 100k.
        cut = np.partition(scores[keep], keep.size - limit)[keep.size - limit]
        keep = keep[scores[keep] >= cut]
    order = keep[np.lexsort((keep, -scores[keep]))]
    return order[:limit].tolist()


# ---------------------------------------------------------------------------------------------------------
# The index
# ---------------------------------------------------------------------------------------------------------


@dataclass
class PathHit:
    rank: int
    score: float


@dataclass
class Hit:
    candidate: Candidate
    score: float | None  # fused score; None on the time path
    paths: dict[str, PathHit] = field(default_factory=dict)


class RecallIndex:
    """Everything recall needs for one character's pools, built once and reused until they change."""

    def __init__(
        self,
        candidates: Sequence[Candidate],
        *,
        stop_names: Sequence[str] = (),
        views: Sequence[str] = ("original", "words"),
        dim: int | None = None,
    ) -> None:
        # Hard filter (§4.2) before anything is indexed: empty text never becomes a row.
        self.candidates = [c for c in candidates if c.text and c.text.strip() and c.tier in TIERS_BM25]
        self.stop_names = tuple(stop_names)
        texts = [c.text for c in self.candidates]
        self.views = {name: Bm25View(LEXICAL_VIEWS[name], texts, self.stop_names) for name in views}
        n = len(self.candidates)
        self.tiers = np.array([c.tier for c in self.candidates], dtype=object)
        self.cosine_pool = np.array([c.tier in TIERS_COSINE for c in self.candidates], dtype=bool)
        spans = [c.event_span() for c in self.candidates]
        self.span_start = np.array([s[0].timestamp() if s else np.nan for s in spans], dtype=np.float64)
        self.span_end = np.array([s[1].timestamp() if s else np.nan for s in spans], dtype=np.float64)
        vectors = [c.vector for c in self.candidates]
        dim = dim or next((v.shape[0] for v in vectors if v is not None), 0)
        self.dim = dim
        matrix = np.zeros((n, dim), dtype=np.float32)
        self.has_vector = np.zeros(n, dtype=bool)
        for i, vec in enumerate(vectors):
            if vec is not None and vec.shape == (dim,):
                matrix[i] = vec
                self.has_vector[i] = True
        norms = np.linalg.norm(matrix, axis=1)
        matrix[self.has_vector] /= norms[self.has_vector, None]
        # Small pools: exact float32 cosine over every row. Large pools: a matrix-vector product over
        # 100k × 512 floats is memory-bound (~30 ms here), so rows are first ranked in a 64-d projection
        # (the top principal directions) and the best ``RESCORE_ROWS`` re-scored exactly from float16.
        self.matrix: np.ndarray | None = matrix
        self.coarse: np.ndarray | None = None
        self.projection: np.ndarray | None = None
        self.full16: np.ndarray | None = None
        if int(self.has_vector.sum()) > EXACT_COSINE_ROWS:
            sample = matrix[self.has_vector][:: max(1, int(self.has_vector.sum()) // 20_000)]
            _, _, vt = np.linalg.svd(sample, full_matrices=False)
            self.projection = np.ascontiguousarray(vt[:COARSE_DIM].T.astype(np.float32))
            self.coarse = np.ascontiguousarray(matrix @ self.projection)
            self.full16 = matrix.astype(np.float16)
            self.matrix = None
        # The matrix holds the vectors now; per-row copies would double the index's memory.
        self.candidates = [replace(c, vector=None) if c.vector is not None else c for c in self.candidates]

    @staticmethod
    def _floors(config: RecallConfig) -> dict[str, float]:
        floors = {f"bm25:{name}": 0.0 for name, _ in config.lexical}
        floors["cosine"] = config.cosine_threshold
        return floors

    def _cosine(self, q: np.ndarray, pool: np.ndarray, also: list[int]) -> np.ndarray:
        """Cosine of every row (exact), or of the coarse top rows plus ``also`` (large pools; others −1)."""
        if self.matrix is not None:
            return self.matrix @ q
        assert self.coarse is not None and self.projection is not None and self.full16 is not None
        approx = self.coarse @ (q @ self.projection)
        approx[~pool] = -np.inf
        take = min(RESCORE_ROWS, approx.size)
        rows = np.argpartition(-approx, take - 1)[:take]
        rows = np.union1d(rows, np.asarray(also, dtype=np.int64))
        scores = np.full(approx.shape, -1.0, dtype=np.float32)
        scores[rows] = self.full16[rows].astype(np.float32) @ q
        return scores

    def __len__(self) -> int:
        return len(self.candidates)

    # --- time ----------------------------------------------------------------------------------------

    def in_window(self, window: TimeWindow) -> np.ndarray:
        """Rows whose event span overlaps ``[start, end)``; rows without a timestamp never do."""
        start, end = window.start.timestamp(), window.end.timestamp()
        with np.errstate(invalid="ignore"):
            return (self.span_start < end) & (self.span_end >= start)

    def by_time(self, window: TimeWindow, *, limit: int = RESULT_CAP) -> list[Hit]:
        """§4.5 ``recall_by_time``: inside first, then by distance to the window, then newest start."""
        start, end = window.start.timestamp(), window.end.timestamp()
        dated = np.flatnonzero(~np.isnan(self.span_start))
        if dated.size == 0:
            return []
        s, e = self.span_start[dated], self.span_end[dated]
        inside = (s < end) & (e >= start)
        distance = np.where(inside, 0.0, np.maximum(s - end, 0.0) + np.maximum(start - e, 0.0))
        order = np.lexsort((-s, distance, ~inside))[:limit]
        return [Hit(candidate=self.candidates[int(dated[i])], score=None) for i in order]

    # --- hybrid --------------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        config: RecallConfig = DEFAULT,
        query_vector: np.ndarray | None = None,
        window: TimeWindow | None = None,
    ) -> list[Hit]:
        """Hybrid recall; ``window`` hard-filters every pool first (query + time routing)."""
        if not query.strip() or not self.candidates:
            return []
        allowed = np.ones(len(self.candidates), dtype=bool)
        if window is not None:
            allowed &= self.in_window(window)
            if not allowed.any():
                return []
        rankings: dict[str, list[int]] = {}
        weights: dict[str, float] = {}
        path_scores: dict[str, np.ndarray] = {}
        if config.use_lexical:
            for view_name, weight in config.lexical:
                view = self.views.get(view_name)
                if view is None:
                    view = self.views[view_name] = Bm25View(
                        LEXICAL_VIEWS[view_name], [c.text for c in self.candidates], self.stop_names
                    )
                scores = view.scores(query)
                path = f"bm25:{view_name}"
                rankings[path] = _top(scores, allowed, config.bm25_threshold, config.per_path)
                weights[path] = weight
                path_scores[path] = scores
        if config.use_vectors and query_vector is not None and self.has_vector.any():
            q = np.asarray(query_vector, dtype=np.float32).reshape(-1)
            if q.shape[0] == self.dim:
                q = q / max(float(np.linalg.norm(q)), 1e-12)
                pool = allowed & self.cosine_pool & self.has_vector
                lexical_rows = [row for rows in rankings.values() for row in rows]
                scores = self._cosine(q, pool, lexical_rows)
                rankings["cosine"] = _top(scores, pool, config.cosine_threshold, config.per_path)
                weights["cosine"] = config.vector_weight
                path_scores["cosine"] = scores
        if config.fusion == "score":
            fused = score_fuse(rankings, path_scores, weights=weights, floors=self._floors(config))
        else:
            fused = rrf_fuse(rankings, k=config.rrf_k, weights=weights)
        fused = fused[: config.total]
        positions = {path: {row: r for r, row in enumerate(rows, start=1)} for path, rows in rankings.items()}
        hits = []
        for row, score in fused:
            paths = {
                path: PathHit(rank=ranks[row], score=float(path_scores[path][row]))
                for path, ranks in positions.items()
                if row in ranks
            }
            hits.append(Hit(candidate=self.candidates[row], score=score, paths=paths))
        return hits
