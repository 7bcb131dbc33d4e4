"""A lookup or a tag sample for the chat's tool, the MCP tool and the browser's query box."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.db import connection

from knowledge import search_selectors, selectors
from knowledge.packs import MATERIAL_TYPES
from knowledge.query_log import knowledge_query_record
from knowledge.search import (
    knowledge_index_watch,
    knowledge_lookup,
)

logger = logging.getLogger(__name__)

QUERY_CHARS = 2_000
QUERY_LIMIT_MAX = 10
QUERY_BUDGET_DEFAULT = 1_500
QUERY_CONCURRENCY = 4
QUERY_MODES = ("lookup", "sample")
QUERY_MATERIAL_TYPES = ("auto", "all", *MATERIAL_TYPES)


_query_slots = threading.BoundedSemaphore(QUERY_CONCURRENCY)


class _Running:
    """How many lookups of this process are under way (the vector fill's batch size reads it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    def __enter__(self) -> None:
        with self._lock:
            self._count += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._count -= 1

    def running(self) -> bool:
        return self._count > 0


lookups_in_flight = _Running()


def knowledge_query(
    *,
    query: str,
    mode: str = "lookup",
    material_type: str = "auto",
    limit: int = 3,
    budget_ms: int = QUERY_BUDGET_DEFAULT,
    language: str | None = None,
    explain: bool = False,
) -> dict[str, Any]:
    """Look up (or sample) entries for the chat's tool; never raises. ``result`` is one of matched,
    miss, timeout, busy, error, disabled, unavailable; ``context`` is "" unless matched. ``explain``
    (the browser's query box, never the wire) adds ``ranks``: each hit's rank on every path."""
    started = time.monotonic()
    mode = mode if mode in QUERY_MODES else "lookup"
    material_type = material_type if material_type in QUERY_MATERIAL_TYPES else "auto"
    query = query.strip()[:QUERY_CHARS]
    limit = min(max(limit, 1), QUERY_LIMIT_MAX)
    budget_ms = min(max(budget_ms, 50), 5_000)

    def finish(result: str, **extra: Any) -> dict[str, Any]:
        elapsed = int((time.monotonic() - started) * 1000)
        hits = list(extra.get("hits") or [])
        answer = {
            "result": result,
            "context": extra.get("context", "") if result == "matched" else "",
            "hits": hits,
            "card_ids": list(extra.get("card_ids") or []),
            "retrieval_mode": extra.get("retrieval_mode", ""),
            "elapsed_ms": elapsed,
        }
        if explain:
            answer["ranks"] = list(extra.get("ranks") or [])
        # Off the answer: on SQLite a write waits for the database's one write lock, which an
        # import's build transactions hold in turns. A storage block leaves the record queued.
        knowledge_query_record(
            mode=mode,
            result=result,
            retrieval_mode=answer["retrieval_mode"],
            hits=len(hits),
            entry_title=hits[0]["title"][:500] if hits else "",
            pack_id=hits[0]["pack_id"] if hits else "",
            elapsed_ms=elapsed,
            error_type=extra.get("error_type", "")[:80],
        )
        return answer

    if not selectors.knowledge_ready():
        return finish("unavailable")
    if not selectors.knowledge_store().enabled:
        return finish("disabled")
    if not query:
        return finish("miss")
    if not _query_slots.acquire(blocking=False):
        return finish("busy")
    try:
        # Several servers on one PostgreSQL database: each polls the store's version, so a pack
        # imported, disabled or removed on one is answered by all within 2 s. SQLite is one server.
        knowledge_index_watch(
            read_version=selectors.knowledge_store_version,
            load_entries=search_selectors.knowledge_search_source,
            poll=connection.vendor == "postgresql",
        )
        with lookups_in_flight:
            outcome = knowledge_lookup(
                entries_version=selectors.knowledge_store_version(),
                load_entries=search_selectors.knowledge_search_source,
                query=query,
                mode=mode,
                material_type=material_type,
                limit=limit,
                budget_ms=budget_ms,
                language=language or "",
            )
    except Exception as exc:
        logger.warning("knowledge query failed: %s", type(exc).__name__, exc_info=True)
        return finish("error", error_type=type(exc).__name__)
    finally:
        _query_slots.release()
    return finish(
        outcome.result,
        context=outcome.context,
        hits=outcome.hits,
        card_ids=outcome.card_ids,
        retrieval_mode=outcome.retrieval_mode,
        ranks=outcome.ranks,
    )
