"""What the server can and cannot do right now: ``GET /api/v1/status/`` and the front door's panel.

Without an LLM provider the server still answers every route, and the LLM work (compression,
extraction, reviews, reflections) waits with a reason; this says so instead of leaving a user with an
empty recall and no sign of why. It never shows an API key: only whether each tier has a provider.

The kernel knows no layer: a layer that stores vectors registers how to count its rows with and
without one (``register_vector_counter``) from its AppConfig.ready, and the install app its section
(``register_install_status``).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from django.conf import settings
from django.db.models import Count
from django.utils import timezone

from nekomem import embeddings
from nekomem.embeddings.profiles import get_profile
from nekomem.journal.models import Job, OutboxOp, WorkStatus
from nekomem.journal.work import NO_PROVIDER, WAIT_BACKOFF
from nekomem.llm import tier_config
from nekomem.llm.config import FALLBACK_TIER
from nekomem.runtime.caches import process_caches_usage
from nekomem.runtime.state import RUNTIME_INITIALIZING, STORAGE_BLOCKED, current_block

logger = logging.getLogger(__name__)

EmbeddingsState = Literal["on", "off", "backfilling"]


@dataclass(frozen=True)
class VectorCoverage:
    """Rows of one pool that have a vector of the current model, and rows still waiting for one."""

    with_vectors: int = 0
    without_vectors: int = 0


# Counts one pool's rows for the model id given (the configured profile's; nothing is loaded).
VectorCounter = Callable[[str], VectorCoverage]
_vector_counters: dict[str, VectorCounter] = {}


def register_vector_counter(name: str, counter: VectorCounter) -> None:
    _vector_counters[name] = counter


def unregister_vector_counter(name: str) -> None:
    _vector_counters.pop(name, None)


@dataclass(frozen=True)
class TierStatus:
    tier: str
    configured: bool
    model: str  # empty when not configured
    provider_tier: str  # the tier whose provider settings it uses: itself, or the summary tier


@dataclass(frozen=True)
class WaitingReason:
    reason: str  # machine-readable, as the work row holds it (``no_provider:summary``)
    description: str  # for people, zh then en
    count: int
    kinds: list[str]  # the job kinds (or outbox op types) waiting for it


@dataclass(frozen=True)
class WorkCounts:
    pending: int = 0  # due now: queued for a worker
    running: int = 0
    waiting: int = 0
    dead: int = 0
    waiting_by_reason: list[WaitingReason] = field(default_factory=list)

    @property
    def unfinished(self) -> int:
        return self.pending + self.running + self.waiting


@dataclass(frozen=True)
class EmbeddingsStatus:
    state: EmbeddingsState
    model_id: str
    model_state: str  # this process's model holder: init (not loaded yet) | loading | ready | disabled
    reason: str  # why vectors are off, when they are
    with_vectors: int | None  # None while the server is starting (the tables may not be there yet)
    without_vectors: int | None
    counted_at: datetime | None = None  # when the two counts were taken (at most the TTL ago)


@dataclass(frozen=True)
class StorageStatus:
    blocked: bool
    reason: str


@dataclass(frozen=True)
class CacheStatus:
    name: str
    entries: int
    rows: int
    bytes: int


@dataclass(frozen=True)
class ProcessStatus:
    """The process that answered: each HTTP worker keeps caches of its own."""

    pid: int
    caches: list[CacheStatus]


def process_status() -> ProcessStatus:
    usage = process_caches_usage()
    return ProcessStatus(
        pid=os.getpid(),
        caches=[CacheStatus(name, u.entries, u.rows, u.bytes) for name, u in usage.items()],
    )


@dataclass(frozen=True)
class StatusSnapshot:
    llm_tiers: list[TierStatus]
    jobs: WorkCounts | None  # None while the server is starting
    outbox: WorkCounts | None
    embeddings: EmbeddingsStatus
    storage: StorageStatus
    process: ProcessStatus
    install: Any = None  # the install app's section (install.sync.InstallStatus); None when standalone

    @property
    def tiers_without_provider(self) -> list[str]:
        return [t.tier for t in self.llm_tiers if not t.configured]

    @property
    def llm_work_waits(self) -> bool:
        """True when some tier has no provider, so its work waits until one is configured."""
        return bool(self.tiers_without_provider)


# --- LLM tiers --------------------------------------------------------------------------------------------


def llm_tiers_status() -> list[TierStatus]:
    tiers = []
    for tier in settings.LLM_TIER_NAMES:
        config = tier_config(tier)
        own = bool((settings.LLM_TIERS.get(tier) or {}).get("base_url"))
        tiers.append(
            TierStatus(
                tier=tier,
                configured=config.configured,
                model=config.model if config.configured else "",
                provider_tier=tier if own or tier == FALLBACK_TIER else FALLBACK_TIER,
            )
        )
    return tiers


def llm_startup_line(tiers: list[TierStatus] | None = None) -> str:
    """The one line the server logs at start-up: which tiers have a provider, and what will wait."""
    tiers = llm_tiers_status() if tiers is None else tiers
    ready = [t for t in tiers if t.configured]
    missing = [t.tier for t in tiers if not t.configured]
    if not ready:
        return (
            f"LLM: no provider configured for any tier ({', '.join(missing)}); LLM work (compression, "
            "fact extraction, reviews, reflections) will wait until NEKOMEM_LLM_SUMMARY_BASE_URL and "
            "NEKOMEM_LLM_SUMMARY_MODEL are set"
        )
    configured = ", ".join(
        f"{t.tier} (model {t.model})" if t.provider_tier == t.tier else f"{t.tier} ({t.provider_tier}'s)"
        for t in ready
    )
    if not missing:
        return f"LLM: tiers configured: {configured}"
    waits = ", ".join(missing)
    return f"LLM: tiers configured: {configured}; work of tiers without a provider will wait: {waits}"


def llm_startup_log() -> None:
    logger.info("%s", llm_startup_line())


# --- durable work -----------------------------------------------------------------------------------------


def waiting_reason_text(reason: str) -> str:
    if reason.startswith(NO_PROVIDER):
        tier = reason.removeprefix(NO_PROVIDER)
        return f"没有 {tier} 层的 LLM 提供方 No provider for the {tier} tier"
    if reason == WAIT_BACKOFF:
        return "失败后等待重试 Backing off after a failure"
    if reason == STORAGE_BLOCKED:
        return "存储已锁定，等待继续 Storage is blocked; waits for continue"
    if reason.startswith("no_handler:"):
        return f"没有处理程序 No handler registered for {reason.removeprefix('no_handler:')}"
    return reason or "—"


_COUNTED = (WorkStatus.PENDING, WorkStatus.RUNNING, WorkStatus.WAITING, WorkStatus.DEAD)


def work_counts(
    model: type[Job] | type[OutboxOp], *, kind_field: str, storage_blocked: bool = False
) -> WorkCounts:
    """Unfinished and dead work of one table by status, and the waiting work by reason (two queries,
    both served by the table's status index; done rows are never read).

    While storage is blocked nothing runs or is claimed, and nothing is written to say so: the
    pending work is reported as waiting for ``storage_blocked`` here instead."""
    manager = model._default_manager
    by_status: dict[str, int] = {
        row["status"]: row["n"]
        for row in manager.filter(status__in=_COUNTED).order_by().values("status").annotate(n=Count("pk"))
    }
    reasons: dict[str, tuple[int, list[str]]] = {}
    waiting = (
        manager.filter(status=WorkStatus.WAITING)
        .order_by()
        .values_list("waiting_reason", kind_field)
        .annotate(n=Count("pk"))
    )
    for reason, kind, count in waiting:
        total, kinds = reasons.get(reason, (0, []))
        reasons[reason] = (total + count, sorted({*kinds, kind}))
    if storage_blocked and by_status.get(WorkStatus.PENDING, 0):
        pending = manager.filter(status=WorkStatus.PENDING).order_by().values_list(kind_field, flat=True)
        total, kinds = reasons.get(STORAGE_BLOCKED, (0, []))
        held = sorted({*kinds, *pending.distinct()})
        held_count = by_status.pop(WorkStatus.PENDING)
        reasons[STORAGE_BLOCKED] = (total + held_count, held)
        by_status[WorkStatus.WAITING] = by_status.get(WorkStatus.WAITING, 0) + held_count
    return WorkCounts(
        pending=by_status.get(WorkStatus.PENDING, 0),
        running=by_status.get(WorkStatus.RUNNING, 0),
        waiting=by_status.get(WorkStatus.WAITING, 0),
        dead=by_status.get(WorkStatus.DEAD, 0),
        waiting_by_reason=[
            WaitingReason(reason=reason, description=waiting_reason_text(reason), count=count, kinds=kinds)
            for reason, (count, kinds) in sorted(reasons.items(), key=lambda item: (-item[1][0], item[0]))
        ],
    )


# --- embeddings -------------------------------------------------------------------------------------------


def vector_coverage(model_id: str) -> VectorCoverage:
    counted = [counter(model_id) for counter in _vector_counters.values()]
    return VectorCoverage(
        with_vectors=sum(c.with_vectors for c in counted),
        without_vectors=sum(c.without_vectors for c in counted),
    )


@dataclass(frozen=True)
class _Counted:
    model_id: str
    monotonic: float
    at: datetime
    coverage: VectorCoverage


# The counters read every row of every vector pool (seconds at 10 M facts): a status poll, a front
# door reload, reuses this process's last count for STATUS_VECTOR_COUNTS_TTL seconds.
_counted: _Counted | None = None
_counting = threading.Lock()


def vector_coverage_recent(model_id: str) -> tuple[VectorCoverage, datetime]:
    """``vector_coverage`` counted at most ``STATUS_VECTOR_COUNTS_TTL`` seconds ago, and when.

    One thread counts at a time, so a burst of polls on a cold process counts once, not once each.
    """
    global _counted
    ttl = float(settings.STATUS_VECTOR_COUNTS_TTL)
    with _counting:
        known = _counted
        if known is None or known.model_id != model_id or time.monotonic() - known.monotonic >= ttl:
            known = _Counted(model_id, time.monotonic(), timezone.now(), vector_coverage(model_id))
            _counted = known
    return known.coverage, known.at


def vector_coverage_forget() -> None:
    """Drop the remembered count (tests: each test's database starts over)."""
    global _counted
    with _counting:
        _counted = None


def embeddings_status(*, count_rows: bool) -> EmbeddingsStatus:
    """On, off, or backfilling (on, with rows still waiting for a vector); never loads the model."""
    holder = embeddings.status()
    model_id = get_profile(embeddings.configured_profile()).model_id
    coverage, counted_at = vector_coverage_recent(model_id) if count_rows else (None, None)
    off = not settings.EMBEDDINGS_ENABLED or holder["state"] == str(embeddings.EmbeddingState.DISABLED)
    state: EmbeddingsState
    if off:
        state = "off"
    elif coverage is not None and coverage.without_vectors:
        state = "backfilling"
    else:
        state = "on"
    return EmbeddingsStatus(
        state=state,
        model_id=model_id,
        model_state=str(holder["state"]),
        reason=str(holder["reason"] or ""),
        with_vectors=coverage.with_vectors if coverage else None,
        without_vectors=coverage.without_vectors if coverage else None,
        counted_at=counted_at,
    )


# --- the install's section ----------------------------------------------------------------------------------

_install_status_reader: Callable[[], object] | None = None


def register_install_status(reader: Callable[[], object]) -> None:
    """The install app's section of the status: ``reader()`` answers None when standalone."""
    global _install_status_reader
    _install_status_reader = reader


def _install_status() -> object:
    return _install_status_reader() if _install_status_reader is not None else None


# --- the snapshot -----------------------------------------------------------------------------------------


def status_snapshot() -> StatusSnapshot:
    """Everything ``/api/v1/status/`` and the front door report, read now.

    While the server is still starting (schema checked, events reconciled) the work tables may not
    exist yet, so only what needs no table is reported; the counts are None.
    """
    block = current_block()
    starting = block is not None and block.reason == RUNTIME_INITIALIZING
    work: dict[str, WorkCounts | None] = {"jobs": None, "outbox": None}
    if not starting:
        held = block is not None
        work = {
            "jobs": work_counts(Job, kind_field="kind", storage_blocked=held),
            "outbox": work_counts(OutboxOp, kind_field="type", storage_blocked=held),
        }
    return StatusSnapshot(
        llm_tiers=llm_tiers_status(),
        jobs=work["jobs"],
        outbox=work["outbox"],
        embeddings=embeddings_status(count_rows=not starting),
        storage=StorageStatus(blocked=block is not None, reason=block.reason if block else ""),
        process=process_status(),
        install=_install_status() if not starting else None,
    )
