"""The background reranker (reference §4.6, last part): Stage 2's pool and the synthesis anchors.

It ranks plain records, not rows of a model; reflections alone uses it. Steps:

1. hard filter: negative evidence score, suppressed, protected, terminal status, empty text;
2. coarse rank by the best cosine against any query text, keeping ``budget × 3`` rows (rows without a
   vector follow the embedded ones, in evidence order);
3. optional LLM re-rank down to ``budget`` — only with more than ``budget`` rows and vectors on; each
   candidate cut to 200 tokens, the list to 15 000, about 8 s; on any failure the coarse order stands.

Without vectors each caller degrades its own way (§6): Stage 2 takes evidence-score order and no LLM
(``on_no_vectors="evidence"``); synthesis anchors get nothing (``on_no_vectors="empty"``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from nekomem.embeddings import EmbeddingError, get_embedder
from nekomem.language.counting import count_tokens, truncate_tokens

logger = logging.getLogger(__name__)

COARSE_FACTOR = 3
LLM_ENTRY_TOKENS = 200
LLM_LIST_TOKENS = 15_000
LLM_TIMEOUT_SECONDS = 8.0
TERMINAL_STATUSES = frozenset({"denied", "archived", "merged", "promote_blocked"})


@dataclass
class RerankRecord:
    id: str
    text: str
    evidence_score: float = 0.0
    vector: np.ndarray | None = None  # a valid vector of the current model, when the caller has one
    suppressed: bool = False
    protected: bool = False
    status: str | None = None
    payload: Any = field(default=None, compare=False)


def hard_filter(records: Sequence[RerankRecord]) -> list[RerankRecord]:
    return [
        r
        for r in records
        if r.text
        and r.text.strip()
        and r.evidence_score >= 0
        and not r.suppressed
        and not r.protected
        and (r.status or "") not in TERMINAL_STATUSES
    ]


def _by_evidence(records: Sequence[RerankRecord]) -> list[RerankRecord]:
    return sorted(records, key=lambda r: -r.evidence_score)


def coarse_rank(records: Sequence[RerankRecord], query_vectors: np.ndarray, keep: int) -> list[RerankRecord]:
    """Best cosine against any query first; rows without vectors after them (evidence order)."""
    embedded = [r for r in records if r.vector is not None and r.vector.shape[-1] == query_vectors.shape[-1]]
    rest = _by_evidence([r for r in records if r not in embedded])
    if embedded:
        matrix = np.stack([r.vector for r in embedded if r.vector is not None]).astype(np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        q = np.atleast_2d(query_vectors).astype(np.float32)
        q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
        best = (matrix @ q.T).max(axis=1)
        order = sorted(range(len(embedded)), key=lambda i: (-best[i], i))
        embedded = [embedded[i] for i in order]
    return [*embedded, *rest][:keep]


LLMRanker = Callable[[list[str], list[dict[str, Any]], int], list[int]]
# (queries, numbered candidate lines, budget) → the chat messages: each caller words the request in the
# user's language (its layer's locale table); the default is the English below.
RankPrompt = Callable[[list[str], list[str], int], list[dict[str, str]]]


def _english_prompt(queries: list[str], lines: list[str], budget: int) -> list[dict[str, str]]:
    content = (
        "Rank the numbered memories by relevance to the queries. Evidence is extra information only.\n"
        "Queries:\n- " + "\n- ".join(queries) + "\n\nMemories:\n" + "\n".join(lines) + "\n\n"
        f'Answer with JSON: {{"ranked": [indices, most relevant first, at most {budget}]}}'
    )
    return [{"role": "user", "content": content}]


def chat_ranker(prompt: RankPrompt = _english_prompt) -> LLMRanker:
    """An LLM re-rank step on the summary tier: one attempt, about 8 s, the reply's ``ranked`` list of
    candidate numbers (anything else raises, and the coarse order stands)."""

    def rank(queries: list[str], candidates: list[dict[str, Any]], budget: int) -> list[int]:
        from nekomem.llm import chat_json

        lines = [f"[{c['index']}] (evidence {c['evidence']:+.2f}) {c['text']}" for c in candidates]
        reply = chat_json(
            tier="summary",
            messages=prompt(queries, lines, budget),
            expect=dict,
            timeout=LLM_TIMEOUT_SECONDS,
            max_attempts=1,
        )
        ranked = reply.get("ranked")
        if not isinstance(ranked, list):
            raise ValueError("no ranked list")
        return [int(i) for i in ranked]

    return rank


llm_rank_chat = chat_ranker()  # the default LLM re-rank, in English


def _llm_rerank(
    queries: list[str], records: list[RerankRecord], budget: int, ranker: LLMRanker
) -> list[RerankRecord]:
    candidates: list[dict[str, Any]] = []
    spent = 0
    for i, r in enumerate(records):
        text = truncate_tokens(r.text, LLM_ENTRY_TOKENS)
        spent += count_tokens(text)
        if spent > LLM_LIST_TOKENS:
            break
        candidates.append({"index": i, "text": text, "evidence": r.evidence_score})
    try:
        ranked = ranker(queries, candidates, budget)
    except Exception as exc:  # LLM down, timeout, bad JSON: the coarse order stands
        logger.info("rerank: LLM re-rank failed (%s); keeping the vector order", type(exc).__name__)
        return records[:budget]
    valid = list(dict.fromkeys(i for i in ranked if 0 <= i < len(candidates)))
    chosen = [records[i] for i in valid]
    # The LLM may return fewer than budget; fill from the coarse order.
    chosen += [r for r in records if r not in chosen]
    return chosen[:budget]


def rerank(
    *,
    queries: Sequence[str],
    records: Sequence[RerankRecord],
    budget: int,
    on_no_vectors: Literal["evidence", "empty"] = "evidence",
    llm: LLMRanker | None = None,
    embed: Callable[[list[str]], np.ndarray | None] | None = None,
) -> list[RerankRecord]:
    """At most ``budget`` records, best first. ``llm`` enables the optional re-rank step."""
    pool = hard_filter(records)
    if budget <= 0 or not pool:
        return []
    query_vectors = _embed_queries([q for q in queries if q and q.strip()], embed)
    if query_vectors is None:
        return [] if on_no_vectors == "empty" else _by_evidence(pool)[:budget]
    coarse = coarse_rank(pool, query_vectors, budget * COARSE_FACTOR)
    if llm is not None and len(coarse) > budget:
        return _llm_rerank(list(queries), coarse, budget, llm)
    return coarse[:budget]


def _embed_queries(
    queries: list[str], embed: Callable[[list[str]], np.ndarray | None] | None
) -> np.ndarray | None:
    if not queries:
        return None
    if embed is not None:
        return embed(queries)
    embedder = get_embedder()
    if embedder is None:
        return None
    try:
        return embedder.embed(queries)
    except EmbeddingError:
        return None
