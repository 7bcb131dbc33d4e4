"""Refine clusters (reference §3.8 "Refine"): pure clustering of near-identical memory items by their
stored vectors, the parsing of the model's action list, and one pass over a character's groups on the
kernel's job mechanism. Persona reads it through ``reflections.services``; both layers read their
rows into plain items and apply the actions to their own rows under the lock (the callbacks they pass).

Clusters are built greedily in the order the caller gives: each item not yet in a cluster takes its
nearest unclustered neighbours with cosine ≥ 0.82 (at most 5, so at most 6 members); a cluster whose
members were all refined as this very cluster within the last 30 days is left alone; at most 3
clusters a pass. The result depends only on the rows and ``now``, so a simulated clock replays it.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

import numpy as np

from nekomem.journal.causes import change_source
from nekomem.journal.jobs import (
    job_fail,
    job_start,
    job_succeed,
    job_supersede_all_but,
    job_wait,
    job_wait_for_provider,
)
from nekomem.journal.work import NO_PROVIDER, no_provider_reason
from nekomem.llm import LLMError, LLMUnavailable, chat_json

REFINE_COSINE = 0.82
MAX_NEIGHBOURS = 5
MAX_MEMBERS = 6
CLUSTERS_PER_PASS = 3
REVISIT_AFTER = timedelta(days=30)
REFINE_ACTIONS = ("merge", "split", "modify", "discard")
# Background hard timeout (reference §7).
REFINE_TIMEOUT = 110
BLOCK_ROWS = 256

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RefineItem:
    """One candidate: a stable key (the row's id), its stored vector and its refine stamps."""

    key: str
    vector: np.ndarray
    last_hash: str | None = None
    last_at: datetime | None = None


@dataclass(frozen=True)
class Cluster:
    keys: tuple[str, ...]
    hash: str


def cluster_hash(keys: Sequence[str]) -> str:
    """The cluster's identity: the same members give the same hash, whatever their order."""
    digest = hashlib.sha256()
    for key in sorted(keys):
        digest.update(key.encode("utf-8") + b"\x00")
    return digest.hexdigest()[:32]


def _recently_refined(members: Sequence[RefineItem], digest: str, now: datetime) -> bool:
    return all(
        item.last_hash == digest and item.last_at is not None and item.last_at > now - REVISIT_AFTER
        for item in members
    )


def refine_clusters(
    items: Sequence[RefineItem],
    *,
    now: datetime,
    limit: int = CLUSTERS_PER_PASS,
    threshold: float = REFINE_COSINE,
) -> list[Cluster]:
    """Up to ``limit`` clusters of two or more items, each a seed and its close unclustered
    neighbours. A cluster seen within 30 days still takes its members (they are not offered to
    another cluster in the same pass) but is not returned."""
    if len(items) < 2 or limit <= 0:
        return []
    matrix = np.vstack([np.asarray(item.vector, dtype=np.float32).ravel() for item in items])
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.where(norms == 0, 1.0, norms)
    taken = np.zeros(len(items), dtype=bool)
    clusters: list[Cluster] = []
    block: np.ndarray | None = None
    block_start = -1
    for seed in range(len(items)):
        if taken[seed]:
            continue
        # Rows in blocks: one matrix product per block (a product per row was 100 times slower
        # on a loaded machine), and memory stays BLOCK_ROWS × items.
        start = seed - seed % BLOCK_ROWS
        if block is None or start != block_start:
            block, block_start = unit[start : start + BLOCK_ROWS] @ unit.T, start
        row = block[seed - start]
        close = np.flatnonzero((row >= threshold) & ~taken)
        # Nearest first; equal similarities keep the caller's order.
        ranked = sorted((int(j) for j in close if j != seed), key=lambda j: (-float(row[j]), j))
        neighbours = ranked[: min(MAX_NEIGHBOURS, MAX_MEMBERS - 1)]
        if not neighbours:
            continue
        members = [seed, *neighbours]
        taken[members] = True
        keys = tuple(items[m].key for m in members)
        digest = cluster_hash(keys)
        if _recently_refined([items[m] for m in members], digest, now):
            continue
        clusters.append(Cluster(keys=keys, hash=digest))
        if len(clusters) >= limit:
            break
    return clusters


@dataclass(frozen=True)
class RefineAction:
    """One action on members of a cluster, by their index in the prompt.

    merge: ``members`` (two or more) become the first one, with ``texts[0]``; split: ``members[0]``
    becomes ``texts`` (two or more); modify: ``members[0]`` gets ``texts[0]``; discard: ``members[0]``
    leaves the live memory."""

    action: str
    members: tuple[int, ...]
    texts: tuple[str, ...] = ()


def _index(value: Any, size: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < size:
        return None
    return value


def _indices(item: dict[str, Any], size: int) -> list[int] | None:
    raw = item.get("ids", item.get("id"))
    values = raw if isinstance(raw, list) else [raw]
    indices = [_index(v, size) for v in values]
    if not indices or any(i is None for i in indices) or len(set(indices)) != len(indices):
        return None
    return [i for i in indices if i is not None]


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _action(item: Any, size: int) -> RefineAction | None:
    if not isinstance(item, dict) or item.get("action") not in REFINE_ACTIONS:
        return None
    members = _indices(item, size)
    if members is None:
        return None
    action = str(item["action"])
    if action == "merge":
        text = _text(item.get("text"))
        return RefineAction(action, tuple(members), (text,)) if len(members) >= 2 and text else None
    if len(members) != 1:
        return None
    if action == "split":
        raw = item.get("texts")
        texts = [t for t in (_text(v) for v in raw) if t] if isinstance(raw, list) else []
        return RefineAction(action, tuple(members), tuple(texts)) if len(texts) >= 2 else None
    if action == "modify":
        text = _text(item.get("text"))
        return RefineAction(action, tuple(members), (text,)) if text else None
    return RefineAction(action, tuple(members))


def refine_actions(reply: Any, size: int) -> list[RefineAction] | None:
    """The valid actions of the model's reply over a cluster of ``size`` members, each member in at
    most one action (the first that names it). ``[]`` keeps the cluster as it is; None when the reply
    held actions but none was valid (one failed attempt, like a corrections batch)."""
    if isinstance(reply, dict):
        reply = reply.get("actions")
    if not isinstance(reply, list):
        return None
    used: set[int] = set()
    actions: list[RefineAction] = []
    kept = False
    for item in reply:
        if isinstance(item, dict) and item.get("action") == "keep":
            kept = True  # an explicit "leave these as they are" is an answer, not a failure
            continue
        action = _action(item, size)
        if action is None or used.intersection(action.members):
            continue
        used.update(action.members)
        actions.append(action)
    if reply and not actions and not kept:
        return None
    return actions


# --- one pass on the kernel's job mechanism ----------------------------------------------------------------

# The key of the job that records a pass waiting for vectors (the degraded path: without vectors there
# are no clusters, and the loop says so in its job instead of guessing from texts).
VECTORS_KEY = "vectors"
NO_VECTORS = "no_vectors"
# A loop's own period: a pass waiting for vectors looks again after one.
REFINE_EVERY = timedelta(minutes=30)


@dataclass(frozen=True)
class RefineGroup:
    """The candidates of one section (a persona entity section, a reflection entity, one subject's
    section): clusters never cross groups. ``label`` is what the prompt calls the section."""

    label: str
    items: list[RefineItem]


@dataclass
class RefineReport:
    clusters: int = 0  # clusters sent to the model and answered
    actions: int = 0  # actions applied
    failed: int = 0  # clusters whose call or answer failed (one attempt of their job)
    skipped: int = 0  # clusters whose job backs off, died, or whose members changed meanwhile
    reason: str = ""


RefineMessages = Callable[[RefineGroup, Cluster], list[dict[str, Any]]]
# Applies the actions to the cluster's members in one locked transaction and stamps the survivors;
# returns how many actions it applied, or None when the members changed since they were read.
RefineApply = Callable[[RefineGroup, Cluster, list[RefineAction]], int | None]


def refine_pass(
    *,
    character_id: int,
    kind: str,
    scoped: bool,
    groups: Sequence[RefineGroup],
    missing_vectors: str,
    messages: RefineMessages,
    apply: RefineApply,
    now: datetime,
) -> RefineReport:
    """Cluster each group, then one model call per cluster (at most 3 a pass), each cluster a job of
    ``kind`` keyed on its hash: failures back off and die after 5 (one probe every 5 h), no provider
    parks the job without spending an attempt. ``missing_vectors`` (a reason, or "") parks the pass.
    A group-chat subject's sections (``scoped``) go to the summary tier without thinking, the
    character's own to the correction tier with it, as in every layer."""
    tier, thinking = ("summary", False) if scoped else ("correction", True)
    if missing_vectors:
        job, why = job_start(character_id=character_id, kind=kind, key=VECTORS_KEY, now=now)
        if job is not None:
            job_wait(job=job, reason=f"{NO_VECTORS}:{missing_vectors}", retry_after=REFINE_EVERY)
        return RefineReport(reason=f"waiting: {NO_VECTORS}:{missing_vectors}")
    report = RefineReport()
    every = [
        (group, cluster)
        for group in groups
        for cluster in refine_clusters(group.items, now=now, limit=len(group.items))
    ]
    # A cluster whose members changed is another cluster: the old one's waiting or dead job is moot.
    job_supersede_all_but(character_id=character_id, kind=kind, keys=[c.hash for _, c in every])
    planned = every[:CLUSTERS_PER_PASS]
    if not planned:
        report.reason = "no clusters"
        return report
    for group, cluster in planned:
        job, why = job_start(
            character_id=character_id, kind=kind, key=cluster.hash, now=now, stop_when_dead=True
        )
        if job is None:
            if why.startswith(NO_PROVIDER):
                report.reason = f"waiting: {why}"
                break
            report.skipped += 1
            continue
        size = len(cluster.keys)
        try:
            actions = chat_json(
                tier=tier,
                messages=messages(group, cluster),
                expect=list,
                thinking=thinking,
                timeout=REFINE_TIMEOUT,
                max_attempts=1,
                validate=partial(_validated_actions, size=size),
            )
        except LLMUnavailable:
            job_wait_for_provider(job=job, tier=tier)
            report.reason = f"waiting: {no_provider_reason(tier)}"
            break
        except LLMError as exc:
            job_fail(job=job, error=exc, now=now)
            report.failed += 1
            continue
        try:
            with change_source(f"job:{job.pk}"):
                applied = apply(group, cluster, actions)
        except Exception as exc:  # a database error is one attempt too; the tick logs it
            job_fail(job=job, error=exc, now=now)
            raise
        if applied is None:
            job_succeed(job=job, outcome="stale")
            report.skipped += 1
            continue
        job_succeed(job=job, outcome=f"{applied} actions")
        report.clusters += 1
        report.actions += applied
    if report.clusters or report.failed:
        logger.info(
            "refine kind=%s character=%s clusters=%d actions=%d failed=%d",
            kind,
            character_id,
            report.clusters,
            report.actions,
            report.failed,
        )
    return report


def _validated_actions(reply: Any, size: int) -> list[RefineAction]:
    actions = refine_actions(reply, size)
    if actions is None:
        raise ValueError("no valid refine action in the reply")
    return actions
