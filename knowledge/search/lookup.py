"""A knowledge lookup (``POST /query``, the MCP tool, the browser's query box): the process's index, the
query vector within the caller's budget, the answer block.

A process's first index is built by the first lookup (which waits for it within its budget and answers
``timeout`` past it; the build goes on for the next one). From then on a lookup never waits for a
build: the index it finds answers, and a newer store version (``"<entries>#<vectors>"``) it reads is
built by one background thread from the current index and switched to when ready. A write of this
process builds its change before it answers (``knowledge_index_refresh`` on commit), so what a user
changed is what their next lookup sees; on a store shared by several servers each polls the version
(``knowledge_index_watch``), so another server's change is seen within a poll plus a build. The query
vector comes from the kernel's model only when it is already loaded (a lookup never loads a model) and
is computed beside the lexical paths; when it is not there within the budget the lookup answers from
exact and BM25 alone (``retrieval_mode: "bm25"``).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from knowledge.search.index import KnowledgeIndex, Ranked
from knowledge.search.index_cache import knowledge_index_for
from knowledge.search.render import Card, render_block
from knowledge.search.types import SearchEntry
from nekomem import embeddings

logger = logging.getLogger(__name__)

MAX_QUERY_CHARS = 2_000
_rng = random.Random()


@dataclass(slots=True)
class LookupOutcome:
    result: str  # matched | miss | timeout | error (the store adds busy, disabled, unavailable)
    context: str = ""
    hits: list[dict[str, str]] = field(default_factory=list)
    card_ids: list[str] = field(default_factory=list)
    retrieval_mode: str = "bm25"  # hybrid | bm25 | sample
    elapsed_ms: int = 0
    # Per hit, for the browser's query box: each path's 1-based rank (None: not found by it).
    ranks: list[dict[str, Any]] = field(default_factory=list)

    def payload(self) -> dict[str, Any]:
        """The wire fields of ``POST /query`` (``ranks`` is the browser's, not the wire's)."""
        return {
            "result": self.result,
            "context": self.context,
            "hits": self.hits,
            "card_ids": self.card_ids,
            "retrieval_mode": self.retrieval_mode,
            "elapsed_ms": self.elapsed_ms,
        }


# --- the query vector --------------------------------------------------------------------------------

_embedding_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="knowledge-query-vector")


def _vector_scores_started(index: KnowledgeIndex, query: str) -> Future[np.ndarray | None] | None:
    """The query's chunk cosines being computed on a worker (the query vector, then the product with the
    chunk vectors), or None when there are no chunk vectors or no loaded model (none is loaded for it)."""
    if not index.has_vectors or not embeddings.is_available(load=False):
        return None
    embedder = embeddings.get_embedder(wait=False)
    if embedder is None:
        return None
    text = " ".join(query.split())
    return _embedding_pool.submit(lambda: index.vector_scores(embedder.embed_query(text)))


def _arrived(started: Future[np.ndarray | None], deadline: float) -> np.ndarray | None:
    try:
        return started.result(timeout=max(0.0, deadline - time.monotonic()))
    except FutureTimeout:
        return None  # late: answered from BM25; the vector is remembered for the same query next time
    except Exception:
        logger.warning("knowledge query vector failed", exc_info=True)
        return None


# --- the lookup --------------------------------------------------------------------------------------


def knowledge_lookup(
    *,
    entries_version: str,
    load_entries: Callable[[], Iterable[SearchEntry]],
    query: str,
    mode: str,
    material_type: str,
    limit: int,
    budget_ms: int,
    language: str,
) -> LookupOutcome:
    """A lookup (``mode: lookup``) or a tag sample (``mode: sample``) over the entries of
    ``entries_version``, which ``load_entries`` reads (enabled entries of sound packs only)."""
    started = time.monotonic()
    deadline = started + max(0, budget_ms) / 1000
    query = query.strip()[:MAX_QUERY_CHARS]
    sample = mode == "sample"

    def outcome(result: str, retrieval_mode: str, **fields: Any) -> LookupOutcome:
        elapsed = round((time.monotonic() - started) * 1000)
        return LookupOutcome(result=result, retrieval_mode=retrieval_mode, elapsed_ms=elapsed, **fields)

    default_mode = "sample" if sample else "bm25"
    try:
        budget = max(0.0, deadline - time.monotonic())
        index = knowledge_index_for(entries_version, load_entries, timeout=budget)
        if index is None:
            return outcome("timeout", default_mode)
        if not query:
            return outcome("miss", default_mode)
        if sample:
            ranked = index.sample(query, material_type=material_type, limit=limit, rng=_rng)
            retrieval_mode = "sample"
        else:
            started_scores = _vector_scores_started(index, query)
            arrived: list[bool] = []

            def vector_scores() -> np.ndarray | None:
                scores = _arrived(started_scores, deadline) if started_scores is not None else None
                arrived.append(scores is not None)
                return scores

            ranked = index.rank(query, material_type=material_type, limit=limit, vector_scores=vector_scores)
            retrieval_mode = "hybrid" if arrived and arrived[0] else "bm25"
        if not ranked:
            return outcome("miss", retrieval_mode)
        return outcome(retrieval_mode=retrieval_mode, **_matched(index, ranked, language))
    except Exception:
        logger.exception("knowledge lookup failed")
        return outcome("error", default_mode)


def _matched(index: KnowledgeIndex, ranked: list[Ranked], language: str) -> dict[str, Any]:
    cards: list[Card] = []
    hits: list[dict[str, str]] = []
    ranks: list[dict[str, Any]] = []
    for hit in ranked:
        entry = index.entries[hit.entry]
        chunks = index.chunk_texts[hit.entry]
        content = chunks[hit.chunk] if 0 <= hit.chunk < len(chunks) else entry.content
        cards.append(
            Card(
                title=entry.title,
                material_type=entry.material_type,
                summary=entry.summary,
                content=content,
                source_name=entry.source_name,
                license=entry.license,
            )
        )
        hits.append({"pack_id": entry.pack_id, "title": entry.title, "material_type": entry.material_type})
        ranks.append(
            {
                "card_id": entry.card_id,
                "exact": hit.exact,
                "bm25": hit.bm25,
                "vector": hit.vector,
                "cosine": hit.cosine,
                "fused": hit.fused,
                "chunk": hit.chunk,
            }
        )
    return {
        "result": "matched",
        "context": render_block(cards, language=language),
        "hits": hits,
        "card_ids": [index.entries[hit.entry].card_id for hit in ranked],
        "ranks": ranks,
    }
