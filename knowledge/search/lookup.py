"""A knowledge lookup (``POST /query``, the MCP tool, the browser's query box): one in-process index per
entries version, the query vector within the caller's budget, the answer block.

The index of a version is built once per process, by the first lookup that needs it (or the store's
``knowledge_index_refresh`` after a change), from the previous version's index. A version may be
``"<must see>#<may lag>"``: when only the part after ``#`` changed (chunk vectors filled in, a pack
added or replaced), lookups keep answering from the previous index until the new one is built; a change
of the part before it (an entry disabled, a pack removed, a type overridden) is waited for. The
entries are read in the caller's thread (the store's read sees the caller's transaction); the
tokenising runs on a builder thread (a child process for a large one) the caller waits for at most its
budget, so a lookup answers ``timeout`` rather than outwait its budget, and the build goes on for the
next one. The query vector comes from the kernel's model only when it is already loaded (a lookup never
loads a model) and is computed beside the lexical paths; when it is not there within the budget the
lookup answers from exact and BM25 alone (``retrieval_mode: "bm25"``).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from knowledge.search.index import KnowledgeIndex, Ranked, build_index
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


# --- the index cache ---------------------------------------------------------------------------------


class _Build:
    def __init__(self, sequence: int) -> None:
        self.sequence = sequence
        self.done = threading.Event()
        self.index: KnowledgeIndex | None = None
        self.error: BaseException | None = None


class _IndexCache:
    """The newest index, and at most one build per version under way."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: KnowledgeIndex | None = None
        self._current_sequence = 0
        self._builds: dict[str, _Build] = {}
        self._sequence = 0

    def clear(self) -> None:
        with self._lock:
            self._current = None
            self._builds.clear()

    def current(self, version: str) -> KnowledgeIndex | None:
        index = self._current
        return index if index is not None and index.version == version else None

    def get(
        self,
        version: str,
        load: Callable[[], Iterable[SearchEntry]],
        *,
        timeout: float | None,
        previous_ok: bool = True,
    ) -> KnowledgeIndex | None:
        """The index of ``version``, waiting for its build at most ``timeout`` seconds (None: as long as it
        takes); None when it is not ready in time. With ``previous_ok`` the current index answers at once
        while the new one builds when only the "may lag" part of the version differs. Raises what the
        entries' read or the build raised."""
        with self._lock:
            index = self.current(version)
            if index is not None:
                return index
            build = self._builds.get(version)
            starter = build is None
            if build is None:
                self._sequence += 1
                build = self._builds[version] = _Build(self._sequence)
            previous = self._current
        # Only what may lag changed: the current index answers while the new one builds.
        stale_ok = previous_ok and previous is not None and may_lag(previous.version, version)
        answering = previous if stale_ok else None
        if starter:
            try:
                records = list(load())
            except BaseException as exc:
                self._finish(version, build, None, exc)
                raise
            threading.Thread(
                target=self._build,
                args=(version, build, records, previous),
                name="knowledge-index",
                daemon=True,
            ).start()
        if answering is not None:
            return answering
        if not build.done.wait(timeout):
            return None
        if build.error is not None:
            raise build.error
        return build.index

    def _build(
        self, version: str, build: _Build, records: list[SearchEntry], previous: KnowledgeIndex | None
    ) -> None:
        try:
            index = build_index(version, records, previous=previous, vector_dim=_vector_dim())
        except BaseException as exc:
            logger.exception("knowledge index build failed")
            self._finish(version, build, None, exc)
            return
        self._finish(version, build, index, None)

    def _finish(
        self, version: str, build: _Build, index: KnowledgeIndex | None, error: BaseException | None
    ) -> None:
        with self._lock:
            # A slower build of an older version never replaces a newer index.
            if index is not None and build.sequence > self._current_sequence:
                self._current, self._current_sequence = index, build.sequence
            if self._builds.get(version) is build:
                del self._builds[version]
        build.index, build.error = index, error
        build.done.set()


_cache = _IndexCache()


def may_lag(version: str, other: str) -> bool:
    """Whether two versions differ in their "may lag" part alone (``"<must see>#<may lag>"``)."""
    return "#" in version and "#" in other and version.split("#", 1)[0] == other.split("#", 1)[0]


def _vector_dim() -> int | None:
    space = embeddings.vector_space()
    return space.dim if space is not None else None


def knowledge_index_refresh(
    *, entries_version: str, load_entries: Callable[[], Iterable[SearchEntry]]
) -> None:
    """Build the index of ``entries_version`` now, in the caller's time (the store calls it after a change
    commits, and at start), so no lookup waits for it."""
    _cache.get(entries_version, load_entries, timeout=None, previous_ok=False)


def knowledge_index_forget() -> None:
    """Drop the process's index (tests; a store emptied under it)."""
    _cache.clear()


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
        index = _cache.get(entries_version, load_entries, timeout=max(0.0, deadline - time.monotonic()))
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
