"""Named recall configurations (which paths, how many candidates, thresholds, fusion)."""

from __future__ import annotations

from collections.abc import Sequence
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
    # How a fused vector space (one row vector holding several models' unit vectors, ``fused-muse-minilm``)
    # ranks a query: "language" weighs each model's cosine by the query's language (``VECTOR_MIX``),
    # "mean" takes the plain mean (what the stored vector alone gives), "first" the first model only.
    # A single-model space ignores it.
    vector_mix: str = "language"
    # A question that asks *when* (``recall.questions``) adds this to the fused score of rows that say
    # when something happened ("yesterday", "last Friday", "去年"): with the row's own date, they answer it.
    when_bonus: float = 0.0
    # Slots kept for the cosine path's own best rows: after fusion, its top ``cosine_slots`` rows (at
    # cosine ≥ ``slot_cosine``) that fusion left outside the result replace the lowest fused ones.
    cosine_slots: int = 0
    slot_cosine: float = 0.0
    # Score fusion's floor per path: "threshold" (the path's threshold) or "list" (the lowest score in
    # the path's own candidate list: min-max over what the path listed).
    floor: str = "threshold"
    # Conversational context: a row's score in each path is raised by ``context_weight`` times what its
    # neighbour scores above the path's floor (the row said just before or after it in the same pool,
    # created within ``context_gap`` seconds). An answer often shares no word with the question it
    # answers, while the turn it answers does ("What did you paint?" → "A lake at sunrise").
    context_weight: float = 0.0
    context_gap: float = 1800.0
    # Pseudo-relevance feedback: the ``feedback_terms`` best terms of the first ``feedback_docs`` fused
    # rows become a lexical path of their own (weight ``feedback_weight``) and the paths are fused again.
    feedback_docs: int = 0
    feedback_terms: int = 10
    feedback_weight: float = 0.3
    context_replies: bool = True
    # The lexical paths match the query without its question words (``recall.questions``): "什么" or
    # "何" matched every other question of the conversation, and the reply context passed that on.
    question_words_out: bool = (
        False  # neighbours only across a change of speaker (entity): a turn and its reply
    )


ORIGINAL = RecallConfig(name="original", lexical=(("original", 1.0),))
DEFAULT = RecallConfig(
    name="nekomem",
    lexical=(("words", 1.0), ("original", 0.3)),
    # Below the lexical total (1.3): anywhere in 0.7–0.9 gave the same picture on every development set.
    # With the reply context and feedback, 0.7–1.1 move single probes either way (the "nekomem-w1" row).
    vector_weight=0.8,
    per_path=20,
    cosine_threshold=0.15,  # MUSE cosines run lower than the original model's (0.3 drops true hits)
    fusion="score",
    when_bonus=0.3,
    # Held back (bench/recall_folds.py, docs/recall-results.md): raw turns +0.037 (LoCoMo +0.114 in
    # every fold); facts have no known speakers, so it never fires on them and costs them nothing.
    context_weight=0.8,
    # Off (issue 50): the feedback terms (feedback_docs=3) and the question words taken out of the query
    # bought nothing held back beyond the spread of the folds (+0.002 and +0.000 on original folders,
    # +0.005 and −0.005 on raw turns) and cost a second fusion pass / a regex on every query.
    feedback_docs=0,
    feedback_weight=0.5,
    question_words_out=False,
)

# Weights of each model's cosine in a fused space, by the query's language; the models a language does
# not name get 0. MiniLM is an English model: on the development sets it beats MUSE on English
# conversation (LoCoMo 0.441 vs 0.311 vectors alone) and is far below it on Chinese (0.282 vs 0.744), so
# English takes the mean of both and every other language MUSE alone.
VECTOR_MIX: dict[str, dict[str, float]] = {"en": {"muse-v3-int8": 0.5, "minilm-l6-int8": 0.5}}
VECTOR_MIX_OTHERS: dict[str, float] = {"muse-v3-int8": 1.0}


def vector_mix(config: RecallConfig, language: str, parts: Sequence[str]) -> tuple[float, ...] | None:
    """The weight of each part's cosine (summing to 1) for a query in ``language``; None: the stored
    mean (configuration "mean", or a fused space none of whose models the table names)."""
    if config.vector_mix == "first":
        return tuple(1.0 if i == 0 else 0.0 for i in range(len(parts)))
    if config.vector_mix != "language":
        return None
    table = VECTOR_MIX.get(language, VECTOR_MIX_OTHERS)
    weights = [table.get(name, 0.0) for name in parts]
    total = sum(weights)
    return tuple(w / total for w in weights) if total > 0 else None


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
# Variants the benchmark measures beside the default (docs/recall-results.md): what each change bought,
# and the ones measured and not taken.
VARIANTS = (
    # Before this work: MUSE for every language, vector weight 0.8, no when-question bonus.
    replace(
        DEFAULT,
        name="nekomem-muse",
        vector_mix="first",
        vector_weight=0.8,
        when_bonus=0.0,
        context_weight=0.0,
        feedback_docs=0,
        question_words_out=False,
    ),
    replace(DEFAULT, name="nekomem-w1", vector_weight=1.0),
    replace(DEFAULT, name="nekomem-mean", vector_mix="mean"),
    replace(DEFAULT, name="nekomem-no-when", when_bonus=0.0),
    # Rejected: three guaranteed cosine slots; min-max over each path's own list.
    replace(DEFAULT, name="nekomem-slots3", cosine_slots=3),
    replace(DEFAULT, name="nekomem-floor-list", floor="list"),
    # Issue 36: without the reply context, the feedback terms and the question words out (as before);
    # context between any two neighbours, not only a turn and its reply (rejected: MADial's memories of
    # one day lift each other, madial-ch 0.667 → 0.602); a deeper candidate list (no change); without the
    # feedback terms; with the question words kept.
    replace(
        DEFAULT, name="nekomem-no-context", context_weight=0.0, feedback_docs=0, question_words_out=False
    ),
    replace(DEFAULT, name="nekomem-ctx-any", context_replies=False),
    replace(DEFAULT, name="nekomem-pp50", per_path=50),
    # The two mechanisms switched off by default (issue 50), on.
    replace(DEFAULT, name="nekomem-feedback", feedback_docs=3),
    replace(DEFAULT, name="nekomem-question-words-out", question_words_out=True),
)
CONFIGS: dict[str, RecallConfig] = {
    c.name: c for c in (DEFAULT, ORIGINAL, BM25_ONLY, BM25_NEKOMEM, VECTORS_ONLY, *VARIANTS)
}
