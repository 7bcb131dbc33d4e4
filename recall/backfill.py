"""Embedding backfill: fill missing or stale fact vectors in batches, then queue paraphrase pairs.

A vector counts only while its fingerprints match (text sha256 + model id, reference §6). The facts
layer clears the columns when it rewrites a text; the sweep here also recomputes the text fingerprint,
so a vector left stale by any other path is replaced too. Vectors are optional: with no model the
backfill does nothing and recall stays on BM25.

After embedding, each new active, not-absorbed fact is compared with the character's other active,
not-absorbed facts of the same entity; pairs above ``DEDUP_COSINE`` go to the facts layer's queue.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from django.db.models import Count, Q

from facts.models import Fact
from facts.services import dedup_pair_queue, fact_vectors_write
from nekomem.embeddings import Embedder, EmbeddingError, encode_vector, get_embedder, text_fingerprint
from nekomem.runtime.status import VectorCoverage
from recall.selectors import stored_vector

logger = logging.getLogger(__name__)

DEDUP_COSINE = 0.85
BATCH = 256  # facts per embed call and per UPDATE transaction (each is one short write and one delta)
BACKFILL_NICE = 10  # CPU priority of the backfill's threads: queries on the same machine go first


@dataclass
class BackfillReport:
    embedded: int = 0
    pairs_queued: int = 0
    seconds: float = 0.0
    characters: list[int] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.embedded / self.seconds if self.seconds else 0.0


def facts_needing_vectors(*, character_id: int, embedder: Embedder, limit: int) -> list[tuple[int, str]]:
    """(pk, text) of facts whose vector is missing, of another model, or of an older text."""
    rows = (
        Fact.objects.filter(character_id=character_id)
        .order_by("pk")
        .values_list("pk", "text", "embedding", "embedding_text_sha256", "embedding_model_id")
    )
    stale: list[tuple[int, str]] = []
    for pk, text, vec, sha, model in rows.iterator(chunk_size=5000):
        if not text or not text.strip():
            continue
        if vec and model == embedder.model_id and sha == text_fingerprint(text):
            continue
        stale.append((pk, text))
        if len(stale) >= limit:
            break
    return stale


def characters_needing_vectors(*, model_id: str) -> list[int]:
    """Characters with a fact lacking a vector of the current model (SQL pre-filter; the per-row text
    fingerprint check happens in ``facts_needing_vectors``)."""
    missing = Q(embedding="") | ~Q(embedding_model_id=model_id)
    return list(Fact.objects.filter(missing).values_list("character_id", flat=True).distinct().order_by())


def fact_vector_coverage(model_id: str) -> VectorCoverage:
    """Facts with a vector of ``model_id`` and facts the backfill still has to embed, for the status
    report: one aggregate over the table, the same SQL test as ``characters_needing_vectors`` (a text
    rewritten since its vector was computed is caught by the backfill's own fingerprint check)."""
    counts = (
        Fact.objects.exclude(text="")
        .order_by()
        .aggregate(
            total=Count("pk"),
            missing=Count("pk", filter=Q(embedding="") | ~Q(embedding_model_id=model_id)),
        )
    )
    return VectorCoverage(with_vectors=counts["total"] - counts["missing"], without_vectors=counts["missing"])


def _queue_pairs(*, character_id: int, new_pks: list[int], embedder: Embedder) -> int:
    """Cosine > DEDUP_COSINE pairs between new facts and the character's other open facts (same entity)."""
    open_facts = list(
        Fact.objects.filter(character_id=character_id, archived=False, absorbed=False).only(
            "pk", "text", "entity", "embedding", "embedding_text_sha256", "embedding_model_id", "character_id"
        )
    )
    by_entity: dict[str, list[tuple[Fact, np.ndarray]]] = {}
    for fact in open_facts:
        vec = stored_vector(
            vector=fact.embedding,
            text_sha256=fact.embedding_text_sha256,
            model_id=fact.embedding_model_id,
            text=fact.text,
            embedder=embedder,
        )
        if vec is not None:
            by_entity.setdefault(fact.entity, []).append((fact, vec))
    wanted = set(new_pks)
    queued = 0
    for rows in by_entity.values():
        facts = [f for f, _ in rows]
        matrix = np.stack([v for _, v in rows]).astype(np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        new_rows = [i for i, f in enumerate(facts) if f.pk in wanted]
        if not new_rows:
            continue
        sims = matrix[new_rows] @ matrix.T
        for r, i in enumerate(new_rows):
            for j in np.flatnonzero(sims[r] > DEDUP_COSINE):
                if j == i or (facts[j].pk in wanted and j < i):
                    continue  # itself, or a new-new pair already seen from the other side
                if dedup_pair_queue(
                    character_id=character_id, candidate=facts[i], existing=facts[j], cosine=float(sims[r, j])
                ):
                    queued += 1
    return queued


@contextmanager
def background_priority(nice: int = BACKFILL_NICE) -> Iterator[None]:
    """Run the block with every thread of this process (the model's own included) at a lower CPU
    priority, so the web workers' queries win the cores; the old priorities are put back after.

    Linux gives each thread its own nice value, hence one call per thread. Going back up needs the
    right to (root, CAP_SYS_NICE or RLIMIT_NICE); without it the worker stays lowered, which only
    ever delays background work.
    """
    changed: dict[int, int] = {}
    tasks = Path("/proc/self/task")
    if nice and tasks.is_dir():
        for entry in tasks.iterdir():
            tid = int(entry.name)
            try:
                before = os.getpriority(os.PRIO_PROCESS, tid)
                if before < nice:
                    os.setpriority(os.PRIO_PROCESS, tid, nice)
                    changed[tid] = before
            except OSError:
                continue  # the thread ended meanwhile, or we may not change it
    try:
        yield
    finally:
        for tid, before in changed.items():
            try:
                os.setpriority(os.PRIO_PROCESS, tid, before)
            except OSError:
                logger.info("backfill priority kept for thread %s (no right to raise it back)", tid)


def embedding_backfill(
    *, character_id: int, limit: int = 10_000, batch: int = BATCH, queue_pairs: bool = True
) -> BackfillReport:
    """Embed up to ``limit`` stale facts of one character at background priority; each written batch
    logs its rows as vector-only changes (recall fills them in place, no index rebuild)."""
    with background_priority():
        return _embedding_backfill(
            character_id=character_id, limit=limit, batch=batch, queue_pairs=queue_pairs
        )


def _embedding_backfill(*, character_id: int, limit: int, batch: int, queue_pairs: bool) -> BackfillReport:
    report = BackfillReport(characters=[character_id])
    embedder = get_embedder()
    if embedder is None:
        return report
    started = time.monotonic()
    todo = facts_needing_vectors(character_id=character_id, embedder=embedder, limit=limit)
    # Similar lengths together: less padding per ONNX batch (the graph pads to the longest string).
    todo.sort(key=lambda row: len(row[1]))
    chunks = [todo[offset : offset + batch] for offset in range(0, len(todo), batch)]
    new_pks: list[int] = []
    # The model embeds chunk i + 1 on its own threads while this thread writes chunk i.
    with ThreadPoolExecutor(1, thread_name_prefix="backfill-embed") as ahead:
        pending = ahead.submit(embedder.embed, [text for _, text in chunks[0]]) if chunks else None
        for i, chunk in enumerate(chunks):
            assert pending is not None
            try:
                vectors = pending.result()
            except EmbeddingError:
                logger.warning("embedding backfill stopped: the model failed (vectors are now off)")
                break
            pending = None
            if i + 1 < len(chunks):
                pending = ahead.submit(embedder.embed, [text for _, text in chunks[i + 1]])
            fact_vectors_write(
                character_id=character_id,
                rows=[
                    (pk, encode_vector(vec), text_fingerprint(text), embedder.model_id)
                    for (pk, text), vec in zip(chunk, vectors, strict=True)
                ],
            )
            new_pks.extend(pk for pk, _ in chunk)
            report.embedded += len(chunk)
        if pending is not None:
            pending.cancel()
    if queue_pairs and new_pks:
        report.pairs_queued = _queue_pairs(character_id=character_id, new_pks=new_pks, embedder=embedder)
    report.seconds = time.monotonic() - started
    logger.info(
        "embedding backfill character=%s embedded=%d pairs=%d rate=%.0f/s",
        character_id,
        report.embedded,
        report.pairs_queued,
        report.rate,
    )
    return report
