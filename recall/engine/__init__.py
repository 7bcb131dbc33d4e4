"""The hybrid recall engine (reference §4.3–4.5): pure functions and plain records, no ORM.

A ``RecallIndex`` is built once per character from plain ``Candidate`` rows (facts, archived facts, and
later reflections: a new pool is one more list of candidates) and answers queries under a named
``RecallConfig``:

- ``ORIGINAL`` reproduces the original server: its tokenizer, BM25 (Lucene IDF, k1 1.5, b 0.75,
  threshold 0.1), cosine ≥ 0.3, top 4 of each path, RRF k 60, cap 8.
- ``DEFAULT`` is nekomem's: wider candidate lists, the improved tokenizer beside the original one (a
  second lexical view catches what folding/stemming loses and the other way round), per-path weights and
  a cosine threshold fitted to MUSE; each row also scored with the turn it answers or that answers it
  (reply context), and a second lexical pass with the best rows' own terms (pseudo-relevance feedback).
  Chosen by ``bench/recall_eval.py`` over all five development sets.

BM25 is a sparse precomputed index (the layout bm25s uses: per term, its score in every document that
contains it), built with numpy and scored with a few array adds rather than a Python loop over
documents; scores are on the original's scale, ``(k1 + 1)`` included, so the 0.1 threshold holds.

Memory: an index is columns, not per-row objects (see ``RecallIndex``), so 100k rows cost tens of MB.
"""

from recall.engine.bm25 import (
    BM25_B,
    BM25_K1,
    LEXICAL_VIEWS,
    Bm25View,
    CountedRows,
    Tokenizer,
)
from recall.engine.configs import (
    BM25_NEKOMEM,
    BM25_ONLY,
    CONFIGS,
    DEFAULT,
    ORIGINAL,
    RESULT_CAP,
    VECTORS_ONLY,
    RecallConfig,
    vector_mix,
)
from recall.engine.fusion import rrf_fuse, score_fuse
from recall.engine.index import RecallIndex
from recall.engine.records import TIERS_BM25, TIERS_COSINE, Candidate, Hit, PathHit

__all__ = [
    "BM25_B",
    "BM25_K1",
    "BM25_NEKOMEM",
    "BM25_ONLY",
    "CONFIGS",
    "DEFAULT",
    "LEXICAL_VIEWS",
    "ORIGINAL",
    "RESULT_CAP",
    "TIERS_BM25",
    "TIERS_COSINE",
    "VECTORS_ONLY",
    "Bm25View",
    "Candidate",
    "CountedRows",
    "Hit",
    "PathHit",
    "RecallConfig",
    "RecallIndex",
    "Tokenizer",
    "rrf_fuse",
    "score_fuse",
    "vector_mix",
]
