"""Named recall configurations (which paths, how many candidates, thresholds, fusion)."""

from __future__ import annotations

from dataclasses import dataclass, replace

RESULT_CAP = 8  # HYBRID_RECALL_BUDGET_TOTAL: results never exceed it, whatever the configuration


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
