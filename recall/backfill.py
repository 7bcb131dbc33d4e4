"""Embedding backfill: fill missing or stale vectors in batches in reference §6's order (persona
entries, then reflections, then facts, then the raw turns extraction has not covered yet), then queue
paraphrase pairs of the new facts.

A vector counts only while its fingerprints match (text sha256 + model id, reference §6). The facts
layer clears the columns when it rewrites a text; the sweep here also recomputes the text fingerprint
(of persona entries and reflections too), so a vector left stale by any other path is replaced. Raw
turns are never edited, so their model id is the only test. Vectors are optional: with no model the
backfill does nothing and recall stays on BM25.

After embedding, each new active, not-absorbed fact is compared with the character's other active,
not-absorbed facts of the same entity; pairs above ``DEDUP_COSINE`` go to the facts layer's queue.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from django.db.models import Count

from facts.models import RECALL_POOL as FACTS_POOL
from facts.models import Fact
from facts.selectors import fact_vector_missing
from facts.services import dedup_pair_queue, fact_vectors_write
from nekomem.characters.models import Character, MemoryChange
from nekomem.embeddings import Embedder, EmbeddingError, encode_vector, get_embedder, text_fingerprint
from nekomem.runtime.state import storage_writes_check
from nekomem.runtime.status import VectorCoverage
from persona.selectors import characters_with_unvectored_persona, persona_entries_needing_vectors
from persona.services import persona_entry_vectors_write
from recall.models import PairsCursor, RawTurnVector
from recall.selectors import (
    characters_with_unvectored_turns,
    raw_turns_covered_through,
    raw_turns_needing_vectors,
    raw_turns_without_vectors,
    stored_vector,
)
from recall.services import raw_turn_vectors_prune, raw_turn_vectors_write
from reflections.selectors import characters_with_unvectored_reflections, reflections_needing_vectors
from reflections.services import reflection_vectors_write

logger = logging.getLogger(__name__)

DEDUP_COSINE = 0.85
BATCH = 256  # facts per embed call and per UPDATE transaction (each is one short write and one delta)
BACKFILL_NICE = 10  # CPU priority of the backfill's threads: queries on the same machine go first


@dataclass
class BackfillReport:
    embedded: int = 0  # every pool's rows
    persona: int = 0  # of which persona entries
    reflections: int = 0  # of which reflections
    raw_turns: int = 0  # of which raw turns
    marked: int = 0  # raw messages with nothing to embed, marked so that no backfill reads them again
    fact_pks: list[int] = field(default_factory=list)  # the facts embedded
    pairs_queued: int = 0
    seconds: float = 0.0
    characters: list[int] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.embedded / self.seconds if self.seconds else 0.0


def facts_needing_vectors(*, character_id: int, embedder: Embedder, limit: int) -> list[tuple[int, str]]:
    """(pk, text) of facts whose vector is missing or of another model (found by SQL); once there are
    none, those whose vector is of an older text (each text's fingerprint recomputed). Archived facts
    are left out: they are not in the cosine pool, and retention drops their vectors."""
    # Group-chat subjects' facts are recalled too (``/query_memory`` with ``subjects``): they get vectors.
    facts = Fact.with_subjects.filter(character_id=character_id, archived=False).order_by("pk")
    missing = facts.filter(fact_vector_missing(embedder.model_id)).values_list("pk", "text")
    stale = [(pk, text) for pk, text in missing[:limit].iterator(chunk_size=5000) if text and text.strip()]
    if stale:
        return stale
    rows = facts.values_list("pk", "text", "embedding_text_sha256")  # the vectors stay in the database
    for pk, text, sha in rows.iterator(chunk_size=5000):
        if text and text.strip() and sha != text_fingerprint(text):
            stale.append((pk, text))
            if len(stale) >= limit:
                break
    return stale


def characters_needing_vectors(*, model_id: str) -> list[int]:
    """Characters with a persona entry, reflection or fact lacking a vector of the current model (SQL
    pre-filter; the per-row text fingerprint check happens in each pool's ``*_needing_vectors``)."""
    facts = (
        Fact.with_subjects.filter(fact_vector_missing(model_id), archived=False)
        .values_list("character_id", flat=True)
        .distinct()
        .order_by()
    )
    found = [
        *characters_with_unvectored_persona(model_id=model_id),
        *characters_with_unvectored_reflections(model_id=model_id),
        *facts,
    ]
    return list(dict.fromkeys(found))


def fact_vector_coverage(model_id: str) -> VectorCoverage:
    """Facts with a vector of ``model_id`` and facts the backfill still has to embed, for the status
    report: one aggregate over the table, the same SQL test as ``characters_needing_vectors`` (a text
    rewritten since its vector was computed is caught by the backfill's own fingerprint check)."""
    counts = (
        Fact.with_subjects.exclude(text="")
        .filter(archived=False)
        .order_by()
        .aggregate(
            total=Count("pk"),
            missing=Count("pk", filter=fact_vector_missing(model_id)),
        )
    )
    return VectorCoverage(with_vectors=counts["total"] - counts["missing"], without_vectors=counts["missing"])


def raw_turn_vector_coverage(model_id: str) -> VectorCoverage:
    """Uncovered raw turns with a vector of ``model_id``, and those still waiting for one (messages
    with nothing to embed count once marked, as neither)."""
    waiting = sum(
        raw_turns_without_vectors(character_id=character_id, model_id=model_id)
        for character_id in characters_with_unvectored_turns(model_id=model_id)
    )
    done = RawTurnVector.objects.filter(embedding_model_id=model_id).exclude(embedding="").count()
    return VectorCoverage(with_vectors=done, without_vectors=waiting)


PAIR_CHUNK = 256  # new facts compared at once: 256 × 100k cosines is 100 MB of float32


def fact_pairs_queue(*, character_id: int, new_pks: list[int], embedder: Embedder) -> int:
    """Queue cosine > DEDUP_COSINE pairs between new facts and the character's other open facts (same
    entity). Reads the vectors as plain values (no model instances for 100k rows) and compares the new
    facts a chunk at a time; only the facts of a pair become instances."""
    rows = (
        Fact.objects.filter(character_id=character_id, archived=False, absorbed=False)
        .order_by("pk")
        .values_list("pk", "entity", "text", "embedding", "embedding_text_sha256", "embedding_model_id")
    )
    by_entity: dict[str, tuple[list[int], list[np.ndarray]]] = {}
    for pk, entity, text, vec, sha, model in rows.iterator(chunk_size=5000):
        vector = stored_vector(vector=vec, text_sha256=sha, model_id=model, text=text, space=embedder)
        if vector is not None:
            keys, vectors = by_entity.setdefault(entity, ([], []))
            keys.append(pk)
            vectors.append(vector)
    wanted = set(new_pks)
    # The comparisons are pure computation: on an idle-class thread (no lock is held there).
    with ThreadPoolExecutor(1, thread_name_prefix="pairs", initializer=compute_thread_idle) as compute:
        found = compute.submit(_similar_pairs, by_entity, wanted).result()
    facts = Fact.objects.in_bulk({pk for pair in found for pk in pair[:2]})
    queued = 0
    for candidate, existing, cosine in found:
        if dedup_pair_queue(
            character_id=character_id, candidate=facts[candidate], existing=facts[existing], cosine=cosine
        ):
            queued += 1
    return queued


def _similar_pairs(
    by_entity: dict[str, tuple[list[int], list[np.ndarray]]], wanted: set[int]
) -> list[tuple[int, int, float]]:
    """(new fact, other fact, cosine) over DEDUP_COSINE within each entity, new rows a chunk at a time."""
    found: list[tuple[int, int, float]] = []
    for keys, vectors in by_entity.values():
        new_rows = [i for i, pk in enumerate(keys) if pk in wanted]
        if not new_rows:
            continue
        matrix = np.stack(vectors).astype(np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        for offset in range(0, len(new_rows), PAIR_CHUNK):
            chunk = new_rows[offset : offset + PAIR_CHUNK]
            sims = matrix[chunk] @ matrix.T
            for r, j in zip(*np.nonzero(sims > DEDUP_COSINE), strict=True):
                i = chunk[r]
                if j == i or (keys[j] in wanted and j < i):
                    continue  # itself, or a new-new pair already seen from the other side
                found.append((keys[i], keys[j], float(sims[r, j])))
    return found


PAIRS_PASS_FACTS = 20_000  # newly embedded facts compared in one pass (a pass re-reads every open vector)


def fact_pairs_pass(*, character_id: int, embedder: Embedder, limit: int = PAIRS_PASS_FACTS) -> int:
    """Queue the paraphrase pairs of the facts whose vectors were written since the character's pairs
    cursor (read from the memory-change log), up to ``limit`` of them; returns how many pairs."""
    cursor, _ = PairsCursor.objects.get_or_create(character_id=character_id)
    rows = list(
        MemoryChange.objects.filter(
            character_id=character_id, pool=FACTS_POOL, vector_only=True, version__gt=cursor.through_version
        )
        .order_by("version")
        .values_list("version", "row")[: limit + 1]
    )
    if not rows:
        return 0
    if len(rows) > limit:  # whole versions only: the cursor then says exactly what was compared
        last = rows[-1][0]
        rows = [row for row in rows if row[0] != last] or [row for row in rows if row[0] == last]
    new_pks = sorted({pk for _, pk in rows if pk is not None})
    queued = fact_pairs_queue(character_id=character_id, new_pks=new_pks, embedder=embedder) if new_pks else 0
    PairsCursor.objects.filter(character_id=character_id).update(through_version=rows[-1][0])
    logger.info("paraphrase pairs character=%s facts=%d pairs=%d", character_id, len(new_pks), queued)
    return queued


def characters_with_pairs_pending() -> list[int]:
    """Characters with fact vectors written after their pairs cursor (a range probe of the change log's
    (character, version) index each, from the cursor on)."""
    through = dict(PairsCursor.objects.values_list("character_id", "through_version"))
    return [
        character_id
        for character_id in Character.objects.order_by("pk").values_list("pk", flat=True)
        if MemoryChange.objects.filter(
            character_id=character_id,
            version__gt=through.get(character_id, 0),
            pool=FACTS_POOL,
            vector_only=True,
        ).exists()
    ]


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


def compute_thread_idle() -> None:
    """Put the calling thread (and the threads it starts) under SCHED_IDLE, where Linux has it: it then
    runs only on a core nothing else wants and gives way at once. A query's p95 beside an embedding
    process measured 26 ms at nice 10, 14 ms with it idle (22 ms with nothing beside it). Only for
    threads that compute and hold no lock: a writer starved while holding SQLite's write lock would
    stall the chat's writes."""
    idle = getattr(os, "SCHED_IDLE", None)
    if idle is not None:
        try:
            os.sched_setscheduler(0, idle, os.sched_param(0))
        except OSError:
            logger.info("SCHED_IDLE refused; the backfill's model threads stay at nice %d", BACKFILL_NICE)


VectorWrite = Callable[[list[tuple[int, str, str, str]]], None]


def embedding_backfill(
    *, character_id: int, limit: int = 10_000, batch: int = BATCH, queue_pairs: bool = True
) -> BackfillReport:
    """Embed up to ``limit`` stale persona entries, reflections, facts, then uncovered raw turns, of one
    character at background priority; each written batch logs its rows as vector-only changes of their
    pool (recall fills them in place, no index rebuild)."""
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
    model_id = embedder.model_id
    # §6's order: what Stage 2 and the prompt use first (persona, reflections), then recall's bulk.
    # A pool is started only once the one before it is done and the model still works.
    left = limit
    pools: list[tuple[str, Callable[[int], list[tuple[int, str]]], VectorWrite]] = [
        (
            "persona",
            lambda n: persona_entries_needing_vectors(character_id=character_id, model_id=model_id, limit=n),
            lambda rows: persona_entry_vectors_write(character_id=character_id, rows=rows),
        ),
        (
            "reflections",
            lambda n: reflections_needing_vectors(character_id=character_id, model_id=model_id, limit=n),
            lambda rows: reflection_vectors_write(character_id=character_id, rows=rows),
        ),
        (
            "facts",
            lambda n: facts_needing_vectors(character_id=character_id, embedder=embedder, limit=n),
            lambda rows: fact_vectors_write(character_id=character_id, rows=rows),
        ),
    ]
    new_pks: list[int] = []
    finished = True
    for pool, needing, write in pools:
        todo = needing(left)
        done = _embed_rows(todo, embedder=embedder, batch=batch, write=write)
        left -= len(done)
        report.embedded += len(done)
        if pool == "persona":
            report.persona = len(done)
        elif pool == "reflections":
            report.reflections = len(done)
        else:
            new_pks = done
        if len(done) < len(todo) or left <= 0:  # the model failed, or this round's rows are spent
            finished = False
            break
    if finished:
        report.raw_turns, report.marked = raw_turns_embed(
            character_id=character_id, embedder=embedder, limit=left, batch=batch
        )
        report.embedded += report.raw_turns
    report.fact_pks = new_pks
    if queue_pairs and new_pks:
        report.pairs_queued = fact_pairs_queue(character_id=character_id, new_pks=new_pks, embedder=embedder)
    report.seconds = time.monotonic() - started
    logger.info(
        "embedding backfill character=%s embedded=%d persona=%d reflections=%d raw_turns=%d pairs=%d "
        "rate=%.0f/s",
        character_id,
        report.embedded,
        report.persona,
        report.reflections,
        report.raw_turns,
        report.pairs_queued,
        report.rate,
    )
    return report


def raw_turns_embed(
    *, character_id: int, embedder: Embedder, limit: int, batch: int = BATCH, idle: bool = True
) -> tuple[int, int]:
    """Embed up to ``limit`` uncovered raw turns of one character lacking a vector of the model;
    returns (embedded, marked): a message with nothing to embed gets an empty marker row, so no
    backfill reads it again. ``idle``: the model computes only on a core nothing else wants."""
    turns = raw_turns_needing_vectors(character_id=character_id, model_id=embedder.model_id, limit=limit)
    markers = [(pk, "", "", embedder.model_id) for pk, text in turns if not text.strip()]
    raw_turn_vectors_write(character_id=character_id, rows=markers)
    embedded = _embed_rows(
        [(pk, text) for pk, text in turns if text.strip()],
        embedder=embedder,
        batch=batch,
        write=lambda rows: raw_turn_vectors_write(character_id=character_id, rows=rows),
        idle=idle,
    )
    return len(embedded), len(markers)


def _embed_rows(
    todo: list[tuple[int, str]], *, embedder: Embedder, batch: int, write: VectorWrite, idle: bool = True
) -> list[int]:
    """Embed (pk, text) rows a batch at a time and ``write`` each batch's (pk, vector, text sha256, model
    id) rows; returns the pks written (fewer than given when the model failed on the way)."""
    # Similar lengths together: less padding per ONNX batch (the graph pads to the longest string).
    todo = sorted(todo, key=lambda row: len(row[1]))
    chunks = [todo[offset : offset + batch] for offset in range(0, len(todo), batch)]
    written: list[int] = []
    # The model embeds chunk i + 1 on its own threads while this thread writes chunk i.
    # The model's threads (and the pool they start) compute idle; this thread writes at nice 10.
    # A chat's new turns (not ``idle``) are a few rows a person waits to find: at normal priority.
    initializer = compute_thread_idle if idle else None
    with ThreadPoolExecutor(1, thread_name_prefix="backfill-embed", initializer=initializer) as ahead:
        pending = ahead.submit(embedder.embed, [text for _, text in chunks[0]]) if chunks else None
        for i, chunk in enumerate(chunks):
            assert pending is not None
            try:
                vectors = pending.result()
            except EmbeddingError:
                logger.warning("embedding backfill stopped: the model failed (vectors are now off)")
                break
            pending = None
            storage_writes_check()  # a block stops the backfill before its next write
            if i + 1 < len(chunks):
                pending = ahead.submit(embedder.embed, [text for _, text in chunks[i + 1]])
            write(
                [
                    (pk, encode_vector(vec), text_fingerprint(text), embedder.model_id)
                    for (pk, text), vec in zip(chunk, vectors, strict=True)
                ]
            )
            written.extend(pk for pk, _ in chunk)
        if pending is not None:
            pending.cancel()
    return written


def raw_turn_vectors_prune_covered() -> int:
    """Drop the vectors of raw turns that extraction has covered since (they left the pool)."""
    dropped = 0
    for character_id in RawTurnVector.objects.values_list("character_id", flat=True).distinct().order_by():
        covered = raw_turns_covered_through(character_id=character_id)
        if covered is not None:
            dropped += raw_turn_vectors_prune(character_id=character_id, covered=covered)
    return dropped


BACKFILL_LOCK = "embedding-backfill"  # one backfill at a time across the cluster (tick or command)
RUN_ROUND = 2000  # rows a round of ``embedding_backfill_run``: each round's progress is reported


def embedding_backfill_run(
    *, character_id: int, on_progress: Callable[[int], None] | None = None, round_limit: int = RUN_ROUND
) -> BackfillReport:
    """Embed every missing vector of one character now, a round at a time (``manage.py backfill``);
    ``on_progress`` hears how many rows each round settled. The caller holds ``BACKFILL_LOCK``. The
    paraphrase pairs of the new facts are left to the schedule's next tick, as after an import."""
    total = BackfillReport(characters=[character_id])
    while True:
        report = embedding_backfill(character_id=character_id, limit=round_limit, queue_pairs=False)
        settled = report.embedded + report.marked
        total.embedded += report.embedded
        total.raw_turns += report.raw_turns
        total.marked += report.marked
        total.seconds += report.seconds
        total.fact_pks += report.fact_pks
        if on_progress is not None and settled:
            on_progress(settled)
        if settled < round_limit:  # nothing left, or the model stopped working on the way
            return total
