"""Hybrid recall for ``POST /query_memory`` (reference §4): routing, vectors, response rows.

Reads only; "service" because it is the one entry point the view and the benchmark call.
"""

from __future__ import annotations

import logging
import math
import os
import re
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.utils import timezone

from nekomem.embeddings import Embedder, EmbeddingError, VectorSpace, embedder_within, vector_space
from nekomem.language.codes import supported_language
from nekomem.language.resolution import language_of
from nekomem.language.stemming import latin_language
from nekomem.subjects import subject_key_of
from recall import engine, index_cache
from recall.engine import DEFAULT, Hit, RecallConfig
from recall.index_cache import RecallIndexBuilding, recall_index
from recall.interim import interim_index
from recall.questions import asks_when
from recall.selectors import RAW_TURN_TIER, recall_character
from recall.times import TimeWindow, find_time_expression, parse_time_window

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecallRequest:
    query: str = ""
    time: str | None = None
    subjects: list[str] | None = None
    language: str | None = None
    explain: bool = False
    config: str | None = None  # a named configuration (benchmarks); None → DEFAULT


def _iso(moment: datetime | None) -> str | None:
    return timezone.localtime(moment).isoformat() if moment is not None else None


def hit_row(hit: Hit, *, explain: bool) -> dict[str, Any]:
    c = hit.candidate
    row: dict[str, Any] = {
        "id": c.id,
        "text": c.text,
        "tier": c.tier,
        "entity": c.entity,
        "subject_kind": c.subject_kind,
        "subject_id": c.subject_id,
        # The original names an unscoped (pre-group-chat) row's scope rather than leaving it null (§1.7).
        "scope": c.scope or "legacy_private",
        "score": round(hit.score, 6) if hit.score is not None else None,
        "created_at": _iso(c.created_at),
        "event_start_at": _iso(c.event_start_at),
        "event_end_at": _iso(c.event_end_at),
    }
    if explain:
        row["explain"] = {
            "pool": "raw turns" if c.tier == RAW_TURN_TIER else c.tier,
            "paths": {p: {"rank": h.rank, "score": round(h.score, 6)} for p, h in hit.paths.items()},
            "fused": row["score"],
        }
    return row


@dataclass(frozen=True)
class _Vectors:
    space: VectorSpace | None  # the index's vectors (None: a BM25-only index)
    query: np.ndarray | None  # the query's vector (None: ranked without the cosine path)
    state: str  # "on", "off" (configuration or vectors unavailable), "loading", "failed"
    scaled: bool = False  # ``query`` weighs a fused space's parts: its dot product is the cosine to rank by
    # The query's vectors being computed beside the index's lexical paths (``beside``): ``resolved``.
    embedding: Future[_Vectors] | None = None

    def resolved(self) -> _Vectors:
        """These vectors with the query's vector in (waiting for it when it is being computed)."""
        return self.embedding.result() if self.embedding is not None else self


_LATIN_WORD = re.compile(r"[a-zà-ÿ']+")


def query_language(query: str, declared: str | None) -> str:
    """The query's language: by script, and for Latin text the declared language if it is one of
    en/es/pt, else English, Spanish or Portuguese by their function words."""
    declared = supported_language(declared)
    language = language_of([query], declared) or "en"
    if language in ("en", "es", "pt") and declared not in ("en", "es", "pt"):
        found = latin_language(_LATIN_WORD.findall(query.lower()), raw_text=query)
        language = {"spanish": "es", "portuguese": "pt", "spanish|portuguese": "es"}.get(found, "en")
    return language


def _mix(embedder: Embedder, config: RecallConfig, language: str) -> Sequence[float] | None:
    """In a fused space (``fused-muse-minilm``), each model's weight for this query's language
    (``engine.vector_mix``); None in a single-model space."""
    parts: list[Embedder] = getattr(embedder, "parts", [])
    return engine.vector_mix(config, language, [p.profile.name for p in parts]) if parts else None


def _query_vector(embedder: Embedder, query: str, config: RecallConfig, language: str) -> _Vectors:
    """The query's vector. In a fused space (``fused-muse-minilm``) each model's part is weighed by the
    query's language (``engine.vector_mix``), and a model weighed 0 is not run at all."""
    weights = _mix(embedder, config, language)
    if weights is None:
        return _Vectors(embedder, embedder.embed_query(query), "on")
    parts: list[Embedder] = getattr(embedder, "parts", [])
    # Rows hold each part's unit vector scaled by 1/√n: scaling the query's parts by √n·w makes the dot
    # product Σ w·cosine, on the same scale (and thresholds) as one model's cosine.
    scale = math.sqrt(len(parts))
    pieces = [
        part.embed_query(query) * np.float32(scale * w) if w else np.zeros(part.dim, dtype=np.float32)
        for part, w in zip(parts, weights, strict=True)
    ]
    return _Vectors(embedder, np.concatenate(pieces), "on", scaled=True)


def _query_vector_or_failed(embedder: Embedder, query: str, config: RecallConfig, language: str) -> _Vectors:
    try:
        return _query_vector(embedder, query, config, language)
    except EmbeddingError:
        logger.warning("query embedding failed; recall continues with BM25 only")
        return _Vectors(None, None, "failed")


# Threads that embed queries beside the index's lexical paths (``_query_vectors(beside=True)``), made
# in the process that uses them (a pool inherited through fork has no threads).
EMBED_BESIDE_THREADS = 2
_beside_pool: tuple[int, ThreadPoolExecutor] | None = None
_beside_lock = threading.Lock()


def _beside() -> ThreadPoolExecutor:
    global _beside_pool
    with _beside_lock:
        if _beside_pool is None or _beside_pool[0] != os.getpid():
            pool = ThreadPoolExecutor(EMBED_BESIDE_THREADS, thread_name_prefix="recall-query-embed")
            _beside_pool = (os.getpid(), pool)
        return _beside_pool[1]


def _query_vectors(
    query: str, config: RecallConfig, language: str = "en", *, beside: bool = False
) -> _Vectors:
    """The index's vectors and the query's. While the model loads (a worker just started) the query
    waits for it at most ``RECALL_MODEL_WAIT_SECONDS``, then ranks by BM25 over the same index.
    ``beside``: the query's vector is computed on another thread (``_Vectors.resolved``) while the
    caller reads the index and ranks its lexical paths: at 100k rows each takes 1-2 ms of a query."""
    space = vector_space()
    if space is None or not config.use_vectors:
        # A configuration without the vector path ranks over the index the others use: an index of
        # its own (one without vectors) would replace theirs, a character having one cache entry, and
        # each switch between them reloaded it (bench/recall_speed.py --configs, 100k: 50-90 ms p50).
        return _Vectors(space, None, "off")
    embedder = embedder_within(settings.RECALL_MODEL_WAIT_SECONDS)
    if embedder is None:
        space = vector_space()  # the load may have failed meanwhile: then a BM25-only index
        return _Vectors(space, None, "loading" if space is not None else "off")
    if not query:
        return _Vectors(embedder, None, "on")
    if beside:
        scaled = _mix(embedder, config, language) is not None
        embedding = _beside().submit(_query_vector_or_failed, embedder, query, config, language)
        return _Vectors(embedder, None, "on", scaled=scaled, embedding=embedding)
    return _query_vector_or_failed(embedder, query, config, language)


def _subject_filter(hits: list[Hit], subjects: list[str] | None) -> list[Hit]:
    # Group chat (reference §1.6): without subjects, the private memory only; with subjects, only those
    # subjects' rows, never private ones (a group's reply must not quote the master's profile).
    if not subjects:
        return [h for h in hits if not h.candidate.subject_id]
    wanted = set(subjects)
    return [h for h in hits if h.candidate.subject_id and _candidate_key(h) in wanted]


def _candidate_key(hit: Hit) -> str:
    return subject_key_of(hit.candidate.subject_kind or "", hit.candidate.subject_id or "")


def _filled_from_window(hits: list[Hit], by_time: list[Hit], *, total: int) -> list[Hit]:
    """Ranked hits, then the window's other rows (newest first) up to ``total``. A question that names a
    time ("지난 주말에 어디 갔었지?") often shares no word with what happened then, and its rest is too
    vague to pass the cosine threshold: what the window holds is the answer the user asked for."""
    seen = {hit.candidate.id for hit in hits}
    inside = [h for h in by_time if h.paths["time"].score == 0.0 and h.candidate.id not in seen]
    return hits + inside[: max(0, total - len(hits))]


def _without_time_expression(query: str, *, window: TimeWindow, now: datetime) -> str:
    """The query to rank by, without the time expression that ``time`` already turned into the window
    ("先週どこに行った?" with time "先週" ranks by "どこに行った?"): the window filters the pools, and the
    expression's own words would only favour rows that happen to say "last week". Kept whole when the
    expression is all there is, or names another window."""
    found = find_time_expression(query, now=now, tz=settings.TIME_ZONE)
    if found is None or found.window != window:
        return query
    rest = f"{query[: found.start]} {query[found.end :]}".strip()
    return rest if any(ch.isalnum() for ch in rest) else query


def recall_query(*, name: str, request: RecallRequest, now: datetime | None = None) -> dict[str, Any]:
    """The ``/query_memory`` body. Raises on internal failure (the view turns that into empty results)."""
    with index_cache.answering():
        return _recall_query(name=name, request=request, now=now)


def _recall_query(*, name: str, request: RecallRequest, now: datetime | None) -> dict[str, Any]:
    started = time.monotonic()
    now = now or timezone.now()
    config = engine.CONFIGS[request.config] if request.config else DEFAULT
    query = (request.query or "").strip()
    body: dict[str, Any] = {"results": [], "query": request.query or ""}
    window: TimeWindow | None = None
    if request.time:
        body["time"] = request.time
        window = parse_time_window(request.time, now=now, tz=settings.TIME_ZONE)
    if window is not None and query:
        query = _without_time_expression(query, window=window, now=now)
    character = recall_character(name=name)
    hits: list[Hit] = []
    candidates_total = 0
    mode = "empty"
    vectors_state = "off"
    if character is not None and (query or window is not None):
        language = query_language(query, request.language)
        vectors = _query_vectors(query, config, language, beside=True)
        try:
            index = recall_index(
                character_id=character.pk,
                stop_names=character.stop_names,
                space=vectors.space,
                version=character.memory_version,
                covered=character.raw_covered,
                raw_written=character.raw_written,
            )
        except RecallIndexBuilding:
            if not query:
                raise
            # A large import's index is being built: the rows that hold the query's words meanwhile.
            index = interim_index(
                character_id=character.pk, query=query, stop_names=character.stop_names, space=vectors.space
            )
            body["index_building"] = True
        candidates_total = len(index)
        # Filtered before ranking, so a busy group's rows never crowd the master's out of the top k.
        subjects = frozenset(request.subjects) if request.subjects else None
        if window is not None and not query:
            mode = "time"
            hits = index.by_time(window, limit=config.total, subjects=subjects)
        elif query:
            # query + parsed time → filter then rank; unparsable time → semantic only (§4.5).
            mode = "hybrid+time" if window is not None else "hybrid"
            hits = index.search(
                query,
                config=config,
                # Asked for once the lexical paths are ranked: the embedding ran beside them.
                query_vector=lambda: vectors.resolved().query,
                window=window,
                subjects=subjects,
                query_scaled=vectors.scaled,
                asks_when=window is None and asks_when(query),
            )
            if window is not None and len(hits) < config.total:
                hits = _filled_from_window(
                    hits, index.by_time(window, limit=config.total, subjects=subjects), total=config.total
                )
        hits = _subject_filter(hits, request.subjects)
        vectors_state = vectors.resolved().state
    body["results"] = [hit_row(h, explain=request.explain) for h in hits]
    if request.explain:
        # What this process's index cache has done so far: tests across processes read it here.
        body["index"] = {name: index_cache.counters[name] for name in ("full_builds", "deltas", "delta_rows")}
        # The route taken and the window used: an unparsable time expression gives no window (§4.5).
        body["mode"] = mode
        body["vectors"] = vectors_state
        body["config"] = config.name
        body["window"] = (
            {"start": _iso(window.start), "end": _iso(window.end)} if window is not None else None
        )
    body["candidates_total"] = candidates_total
    body["elapsed_ms"] = round((time.monotonic() - started) * 1000, 2)
    logger.info(
        "query_memory character=%s mode=%s config=%s vectors=%s hits=%d candidates=%d ms=%.1f",
        name,
        mode,
        config.name,
        vectors_state,
        len(hits),
        candidates_total,
        body["elapsed_ms"],
    )
    logger.debug("query_memory query=%r time=%r", request.query, request.time)
    return body


def recall_failed_body(request_query: Any, *, error_code: str = "hybrid_recall_failed") -> dict[str, Any]:
    """What any internal failure answers (reference §1.3): 200, no results, an error code."""
    return {
        "results": [],
        "query": request_query if isinstance(request_query, str) else "",
        "candidates_total": 0,
        "elapsed_ms": 0,
        "error_code": error_code,
    }
