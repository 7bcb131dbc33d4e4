"""The hybrid recall engine (reference §4.3–4.5): pure functions and plain records, no ORM.

A ``RecallIndex`` is built once per character from plain ``Candidate`` rows (facts, archived facts, and
later reflections: a new pool is one more list of candidates) and answers queries under a named
``RecallConfig``:

- ``ORIGINAL`` reproduces the original server: its tokenizer, BM25 (Lucene IDF, k1 1.5, b 0.75,
  threshold 0.1), cosine ≥ 0.3, top 4 of each path, RRF k 60, cap 8.
- ``DEFAULT`` is nekomem's: wider candidate lists, the improved tokenizer beside the original one (a
  second lexical view catches what folding/stemming loses and the other way round), per-path weights and
  a cosine threshold fitted to MUSE. Chosen by ``bench/recall_eval.py`` over all five development sets.

BM25 is a sparse precomputed index (the layout bm25s uses: per term, its score in every document that
contains it), built with numpy and scored with a few array adds rather than a Python loop over
documents; scores are on the original's scale, ``(k1 + 1)`` included, so the 0.1 threshold holds.

Memory: an index is columns, not per-row objects (see ``RecallIndex``), so 100k rows cost tens of MB.
"""

from __future__ import annotations

import logging
import math
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from nekomem.textproc import recall_tokens, search_tokens
from nekomem.timewindows import TimeWindow

logger = logging.getLogger(__name__)

BM25_K1 = 1.5
BM25_B = 0.75
EXACT_COSINE_ROWS = 20_000  # above this, cosine is coarse-then-exact (see RecallIndex.__init__)
COARSE_DIM = 64
COARSE_CHUNK = 8192
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
    """One lexical view of a pool: its tokenizer and a precomputed sparse BM25 index (Lucene IDF).

    The layout bm25s uses (one column per term listing the documents that contain it), built with numpy
    from a flat token-id array so a 100k-row pool needs no per-document Python lists; a column holds
    term frequencies and a query turns its columns into scores on the original's scale (``(k1 + 1)``
    included).
    After ``freeze`` the vocabulary is a sorted array of the tokens' hashes (8 bytes a term instead of a
    dict entry and a string); hashes are per process, as the index is. A 64-bit collision between two
    distinct terms (≈ n²/2⁶⁴) would only merge their columns.
    """

    def __init__(
        self, tokenizer: Tokenizer, texts: Iterable[str] = (), stop_names: Sequence[str] = ()
    ) -> None:
        self.tokenizer = tokenizer
        self.stop_names = tuple(stop_names)
        self._vocab: dict[str, int] | None = {}
        self._tokens = array("i")  # every document's token ids, concatenated
        self._lengths = array("i")  # tokens per document
        self.size = 0
        self._keys = np.zeros(0, dtype=np.int64)  # sorted token hashes
        self._columns = np.zeros(0, dtype=np.int32)  # column of each key
        self._indptr = np.zeros(1, dtype=np.int64)
        self._indices = np.zeros(0, dtype=np.int32)
        self._tf = np.zeros(0, dtype=np.uint8)
        self._idf = np.zeros(0, dtype=np.float32)
        self._norm = np.zeros(0, dtype=np.float32)  # k1·(1 − b + b·dl/avgdl) per row
        for text in texts:
            self.add(text)
        if self.size:
            self.freeze()

    def add(self, text: str) -> None:
        assert self._vocab is not None, "frozen"
        vocab = self._vocab
        ids = [vocab.setdefault(tok, len(vocab)) for tok in self.tokenizer(text, self.stop_names)]
        self._tokens.extend(ids)
        self._lengths.append(len(ids))
        self.size += 1

    def freeze(self) -> None:
        """Compute the sparse score matrix and drop the build-time structures."""
        if self._vocab is None:
            return
        vocab, self._vocab = self._vocab, None
        n, n_terms = self.size, len(vocab)
        tokens = np.frombuffer(self._tokens, dtype=np.int32) if self._tokens else np.zeros(0, np.int32)
        lengths = np.frombuffer(self._lengths, dtype=np.int32) if self._lengths else np.zeros(0, np.int32)
        if n and tokens.size:
            # (term, document) pairs in column order, with their term frequencies.
            pairs, tf = np.unique(
                tokens.astype(np.int64) * n + np.repeat(np.arange(n, dtype=np.int64), lengths),
                return_counts=True,
            )
            terms = (pairs // n).astype(np.int32)
            docs = (pairs % n).astype(np.int32)
            del pairs
            df = np.bincount(terms, minlength=n_terms)
            self._idf = np.log1p((n - df + 0.5) / (df + 0.5)).astype(np.float32)
            avgdl = max(float(lengths.mean()), 1e-9)
            self._norm = (BM25_K1 * (1 - BM25_B + BM25_B * lengths / avgdl)).astype(np.float32)
            # Term frequencies, not scores, are stored (1 byte a posting instead of 4); a query computes
            # the scores of its own terms' postings. A term repeated > 255 times in one row counts 255.
            self._tf = np.minimum(tf, 255).astype(np.uint8)
            self._indices = docs
            self._indptr = np.concatenate(([0], np.cumsum(df))).astype(np.int64)
            keys = np.fromiter((hash(t) for t in vocab), dtype=np.int64, count=n_terms)
            order = np.argsort(keys, kind="stable")
            self._keys = keys[order]
            self._columns = np.fromiter(vocab.values(), dtype=np.int32, count=n_terms)[order]
        self._tokens = array("i")
        self._lengths = array("i")

    def _term_columns(self, query: str) -> list[int]:
        # Query terms de-duplicated (§4.3); unknown terms contribute nothing.
        wanted = list(dict.fromkeys(self.tokenizer(query, self.stop_names)))
        if not wanted or not self._keys.size:
            return []
        hashes = np.fromiter((hash(t) for t in wanted), dtype=np.int64, count=len(wanted))
        at = np.minimum(np.searchsorted(self._keys, hashes), self._keys.size - 1)
        found = self._keys[at] == hashes
        return [int(c) for c in self._columns[at[found]]]

    def scores(self, query: str) -> np.ndarray:
        """Scores of every row on the original's scale (0 where no query term occurs)."""
        self.freeze()
        scores = np.zeros(self.size, dtype=np.float32)
        k1_plus_1 = np.float32(BM25_K1 + 1)
        for column in self._term_columns(query):
            start, end = self._indptr[column], self._indptr[column + 1]
            rows = self._indices[start:end]
            tf = self._tf[start:end].astype(np.float32)
            # A row occurs once per column, so a fancy-indexed add is exact (no np.add.at).
            scores[rows] += self._idf[column] * tf * k1_plus_1 / (tf + self._norm[rows])
        return scores

    @property
    def nbytes(self) -> int:
        arrays = (self._keys, self._columns, self._indptr, self._indices, self._tf, self._idf, self._norm)
        return sum(a.nbytes for a in arrays)


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


class _StringColumn:
    """Rows of ``fields`` strings, UTF-8 and zlib-compressed in blocks of ``BLOCK`` rows: no Python
    object per row, and about a third of the raw size. A hit decompresses one block (~20 µs)."""

    BLOCK = 32

    def __init__(self, fields: int) -> None:
        self.fields = fields
        self._blob = bytearray()
        self._block_ends = array("q")
        self._ends = array("I")  # per row and field: where it ends in its block's raw bytes
        self._pending = bytearray()
        self._rows = 0

    def append(self, *values: str) -> None:
        assert len(values) == self.fields
        for value in values:
            self._pending += value.encode("utf-8", "surrogatepass")
            self._ends.append(len(self._pending))
        self._rows += 1
        if self._rows % self.BLOCK == 0:
            self._seal()

    def _seal(self) -> None:
        self._blob += zlib.compress(bytes(self._pending), 6)
        self._block_ends.append(len(self._blob))
        self._pending = bytearray()

    def freeze(self) -> None:
        if self._rows % self.BLOCK:
            self._seal()
        self._blob = bytearray(self._blob)  # drops the growth slack

    def _block(self, block: int) -> bytes:
        start = self._block_ends[block - 1] if block else 0
        return zlib.decompress(self._blob[start : self._block_ends[block]])

    def _fields(self, raw: bytes, row: int) -> tuple[str, ...]:
        first = row * self.fields
        start = self._ends[first - 1] if row % self.BLOCK else 0
        out = []
        for end in self._ends[first : first + self.fields]:
            out.append(raw[start:end].decode("utf-8", "surrogatepass"))
            start = end
        return tuple(out)

    def __getitem__(self, row: int) -> tuple[str, ...]:
        return self._fields(self._block(row // self.BLOCK), row)

    def column(self, field: int) -> Iterator[str]:
        """One field of every row, in order (each block decompressed once)."""
        for block in range(len(self._block_ends)):
            raw = self._block(block)
            for row in range(block * self.BLOCK, min(self._rows, (block + 1) * self.BLOCK)):
                yield self._fields(raw, row)[field]

    def __len__(self) -> int:
        return self._rows

    @property
    def nbytes(self) -> int:
        return len(self._blob) + self._ends.itemsize * len(self._ends) + 8 * len(self._block_ends)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_NO_TIME = -(2**63)


class _TimeColumn:
    """Aware datetimes as int64 microseconds since the epoch (read back in UTC: the same instant);
    naive ones, which have no instant, are kept as they are."""

    def __init__(self) -> None:
        self._micros = array("q")
        self._naive: dict[int, datetime] = {}

    def append(self, value: datetime | None) -> None:
        if value is None:
            self._micros.append(_NO_TIME)
        elif value.tzinfo is None or value.utcoffset() is None:
            self._naive[len(self._micros)] = value
            self._micros.append(_NO_TIME)
        else:
            self._micros.append((value - _EPOCH) // _MICROSECOND)

    def __getitem__(self, row: int) -> datetime | None:
        micros = self._micros[row]
        if micros == _NO_TIME:
            return self._naive.get(row)
        return _EPOCH + timedelta(microseconds=micros)


class _Codes:
    """A column of few distinct values (tier, entity) as small integer codes."""

    def __init__(self) -> None:
        self._codes = array("i")
        self._values: list[Any] = []
        self._index: dict[Any, int] = {}

    def append(self, value: Any) -> None:
        code = self._index.get(value)
        if code is None:
            code = self._index[value] = len(self._values)
            self._values.append(value)
        self._codes.append(code)

    def __getitem__(self, row: int) -> Any:
        return self._values[self._codes[row]]

    def mask(self, wanted: frozenset[Any]) -> np.ndarray:
        codes = np.frombuffer(self._codes, dtype=np.int32) if self._codes else np.zeros(0, np.int32)
        return np.isin(codes, [c for v, c in self._index.items() if v in wanted])


class _RowStore:
    """What a hit shows about its row, stored column-wise; ``candidate(row)`` rebuilds the record."""

    def __init__(self) -> None:
        self.strings = _StringColumn(2)  # (id, text)
        self.tiers = _Codes()
        self.entities = _Codes()
        self.created = _TimeColumn()
        self.starts = _TimeColumn()
        self.ends = _TimeColumn()
        self.rare: dict[int, tuple[str | None, str | None, str | None, float]] = {}  # subject/scope/evidence

    def append(self, c: Candidate) -> None:
        row = len(self.strings)
        self.strings.append(c.id, c.text)
        self.tiers.append(c.tier)
        self.entities.append(c.entity)
        self.created.append(c.created_at)
        self.starts.append(c.event_start_at)
        self.ends.append(c.event_end_at)
        if c.subject_kind is not None or c.subject_id is not None or c.scope is not None or c.evidence_score:
            self.rare[row] = (c.subject_kind, c.subject_id, c.scope, c.evidence_score)

    def candidate(self, row: int) -> Candidate:
        kind, subject, scope, evidence = self.rare.get(row, (None, None, None, 0.0))
        row_id, text = self.strings[row]
        return Candidate(
            id=row_id,
            text=text,
            tier=self.tiers[row],
            entity=self.entities[row],
            created_at=self.created[row],
            event_start_at=self.starts[row],
            event_end_at=self.ends[row],
            subject_kind=kind,
            subject_id=subject,
            scope=scope,
            evidence_score=evidence,
        )

    def __len__(self) -> int:
        return len(self.strings)


class _VectorBuilder:
    """Collects unit vectors row by row; small pools stay float32 (exact cosine), large ones become int8
    rows with a per-row scale plus a 64-d float32 projection for the coarse pass."""

    CHUNK = 4096

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self.has = array("b")
        self._buffer = np.zeros((self.CHUNK, dim), dtype=np.float32) if dim else np.zeros((0, 0), np.float32)
        self._filled = 0
        self._exact: list[np.ndarray] = []  # float32 chunks, kept while the pool is small
        self._q8: list[np.ndarray] = []
        self._scale: list[np.ndarray] = []
        self.count = 0

    def append(self, vector: np.ndarray | None) -> None:
        ok = vector is not None and self.dim > 0 and vector.shape == (self.dim,)
        self.has.append(1 if ok else 0)
        if not self.dim:
            return
        if ok:
            self._buffer[self._filled] = vector
            self.count += 1
        else:
            self._buffer[self._filled] = 0.0
        self._filled += 1
        if self._filled == self.CHUNK:
            self._flush()

    def _flush(self) -> None:
        if not self._filled:
            return
        rows = self._buffer[: self._filled].copy()
        self._filled = 0
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        rows /= np.maximum(norms, 1e-12)
        if self.count <= EXACT_COSINE_ROWS:
            self._exact.append(rows)
        else:
            self._exact.clear()
        # int8 with a per-row scale: cosine error ≈ 1e-3, far below the gaps that decide a top-20.
        scale = np.maximum(np.abs(rows).max(axis=1), 1e-12) / 127.0
        self._q8.append(np.rint(rows / scale[:, None]).astype(np.int8))
        self._scale.append(scale.astype(np.float32))

    def build(self, index: RecallIndex) -> None:
        self._flush()
        self._buffer = np.zeros((0, 0), np.float32)
        n = len(self.has)
        index.has_vector = np.frombuffer(self.has, dtype=np.int8).astype(bool) if n else np.zeros(0, bool)
        if self.count <= EXACT_COSINE_ROWS:
            index.matrix = np.concatenate(self._exact) if self._exact else np.zeros((n, self.dim), np.float32)
            self._q8.clear()
            return
        q8, scale = np.concatenate(self._q8), np.concatenate(self._scale)
        self._q8.clear()
        self._scale.clear()
        # The top principal directions of a sample of the vectors.
        valid = np.flatnonzero(index.has_vector)
        sample = valid[:: max(1, valid.size // 20_000)]
        x = q8[sample].astype(np.float32) * scale[sample, None]
        # Right singular vectors of the sample = eigenvectors of its Gram matrix (dim × dim): ~50× faster.
        eigenvalues, eigenvectors = np.linalg.eigh((x.T @ x).astype(np.float64))
        top = np.argsort(eigenvalues)[::-1][:COARSE_DIM]
        projection = np.ascontiguousarray(eigenvectors[:, top].astype(np.float32))
        coarse = np.empty((n, projection.shape[1]), dtype=np.float32)
        for start in range(0, n, self.CHUNK):
            part = slice(start, start + self.CHUNK)
            coarse[part] = (q8[part].astype(np.float32) * scale[part, None]) @ projection
        # The projection kept as int8 too, one scale per direction (the directions' spreads differ a lot):
        # a quarter of the memory for ~6 ms more per query at 100k rows, well inside the budget.
        column_scale = np.maximum(np.abs(coarse).max(axis=0), 1e-12) / 127.0
        index.projection = np.ascontiguousarray(projection * column_scale[None, :].astype(np.float32))
        index.coarse = np.rint(coarse / column_scale[None, :]).astype(np.int8)
        del coarse
        index.matrix = None
        index.q8, index.q8_scale = q8, scale


class RecallIndex:
    """Everything recall needs for one character's pools, built once and reused until they change.

    Built in one pass over the candidates (an iterator is fine: a 100k-row pool is never held as
    Python objects), into columns: texts and ids as UTF-8 buffers, times as int64, vectors as float32
    (≤ ``EXACT_COSINE_ROWS`` rows: exact cosine) or int8 + a 64-d projection (coarse then exact).
    """

    matrix: np.ndarray | None
    coarse: np.ndarray | None
    projection: np.ndarray | None
    q8: np.ndarray | None
    q8_scale: np.ndarray | None
    has_vector: np.ndarray

    def __init__(
        self,
        candidates: Iterable[Candidate],
        *,
        stop_names: Sequence[str] = (),
        views: Sequence[str] = ("original", "words"),
        dim: int | None = None,
    ) -> None:
        self.stop_names = tuple(stop_names)
        self.views = {name: Bm25View(LEXICAL_VIEWS[name], (), self.stop_names) for name in views}
        self.rows = _RowStore()
        self.matrix = self.coarse = self.projection = self.q8 = self.q8_scale = None
        vectors: _VectorBuilder | None = _VectorBuilder(dim) if dim else None
        unvectored = 0  # rows seen before the first vector tells the dimension
        starts, ends = array("d"), array("d")
        for c in candidates:
            # Hard filter (§4.2) before anything is indexed: empty text never becomes a row.
            if not c.text or not c.text.strip() or c.tier not in TIERS_BM25:
                continue
            if vectors is None and c.vector is not None:
                vectors = _VectorBuilder(int(np.asarray(c.vector).reshape(-1).shape[0]))
                for _ in range(unvectored):
                    vectors.append(None)
            self.rows.append(c)
            for view in self.views.values():
                view.add(c.text)
            span = c.event_span()
            starts.append(span[0].timestamp() if span else math.nan)
            ends.append(span[1].timestamp() if span else math.nan)
            if vectors is None:
                unvectored += 1
            else:
                vector = None if c.vector is None else np.asarray(c.vector, dtype=np.float32).reshape(-1)
                vectors.append(vector)
        self.rows.strings.freeze()
        for view in self.views.values():
            view.freeze()
        n = len(self.rows)
        self.span_start = np.frombuffer(starts, dtype=np.float64).copy() if n else np.zeros(0)
        self.span_end = np.frombuffer(ends, dtype=np.float64).copy() if n else np.zeros(0)
        self.cosine_pool = self.rows.tiers.mask(TIERS_COSINE)
        if vectors is None:
            vectors = _VectorBuilder(0)
            for _ in range(unvectored):
                vectors.append(None)
        self.dim = vectors.dim
        vectors.build(self)

    @property
    def candidates(self) -> list[Candidate]:
        """Every row as a record (tests and small tools; queries rebuild only their hits)."""
        return [self.rows.candidate(i) for i in range(len(self.rows))]

    @property
    def nbytes(self) -> int:
        """Approximate bytes held by the index's arrays and buffers."""
        arrays = (self.matrix, self.coarse, self.projection, self.q8, self.q8_scale, self.has_vector)
        total = sum(a.nbytes for a in arrays if a is not None)
        total += self.span_start.nbytes + self.span_end.nbytes + self.cosine_pool.nbytes
        total += sum(v.nbytes for v in self.views.values())
        return total + self.rows.strings.nbytes

    @staticmethod
    def _floors(config: RecallConfig) -> dict[str, float]:
        floors = {f"bm25:{name}": 0.0 for name, _ in config.lexical}
        floors["cosine"] = config.cosine_threshold
        return floors

    def _cosine(self, q: np.ndarray, pool: np.ndarray, also: list[int]) -> np.ndarray:
        """Cosine of every row (exact), or of the coarse top rows plus ``also`` (large pools; others −1)."""
        if self.matrix is not None:
            return self.matrix @ q
        assert self.coarse is not None and self.projection is not None
        assert self.q8 is not None and self.q8_scale is not None
        projected = q @ self.projection
        approx = np.empty(self.coarse.shape[0], dtype=np.float32)
        for start in range(0, approx.size, COARSE_CHUNK):  # int8 → float32 a cache-sized block at a time
            block = self.coarse[start : start + COARSE_CHUNK].astype(np.float32)
            approx[start : start + COARSE_CHUNK] = block @ projected
        approx[~pool] = -np.inf
        take = min(RESCORE_ROWS, approx.size)
        rows = np.argpartition(approx, approx.size - take)[approx.size - take :]
        rows = np.union1d(rows, np.asarray(also, dtype=np.int64))
        scores = np.full(approx.shape, -1.0, dtype=np.float32)
        scores[rows] = (self.q8[rows].astype(np.float32) @ q) * self.q8_scale[rows]
        return scores

    def __len__(self) -> int:
        return len(self.rows)

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
        return [Hit(candidate=self.rows.candidate(int(dated[i])), score=None) for i in order]

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
        if not query.strip() or not len(self.rows):
            return []
        allowed = np.ones(len(self.rows), dtype=bool)
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
                    texts = self.rows.strings.column(1)
                    view = self.views[view_name] = Bm25View(LEXICAL_VIEWS[view_name], texts, self.stop_names)
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
            hits.append(Hit(candidate=self.rows.candidate(row), score=score, paths=paths))
        return hits
