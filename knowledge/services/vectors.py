"""The background fill of chunk vectors: small batches in a task, never on a request."""

from __future__ import annotations

import logging
import time

from django.db import connection, transaction

from knowledge import selectors
from knowledge.models import (
    IndexBatch,
    KnowledgeChunk,
)
from knowledge.query_log import diagnostics_trim
from knowledge.search import chunk_embed_text
from knowledge.services.queries import lookups_in_flight
from knowledge.services.store import store_changed
from nekomem import embeddings
from nekomem.characters.locks import exclusive_work
from nekomem.journal.broker import task_enqueue
from nekomem.runtime.state import storage_writer

logger = logging.getLogger(__name__)

VECTORS_TASK = "knowledge.tasks.knowledge_vectors_fill"
# Background vector fill: small batches while a lookup of this process is under way, so inference
# never holds the shared model long in front of a query vector; larger ones otherwise (fewer reads and
# writes a chunk; the model's own time a chunk barely depends on the batch).
INDEX_BATCH = 8
INDEX_BATCH_IDLE = 32
# Chunks a round: each round moves the store's vectors version, which every server rebuilds its index
# for, so rounds are not too small.
INDEX_ROUND = 256
# How long one fill task runs before it hands over to the next.
FILL_TASK_SECONDS = 30.0


def vectors_enqueue() -> None:
    try:
        task_enqueue(VECTORS_TASK, task_name="knowledge-vectors", group="knowledge", save=False)
    except Exception:
        logger.exception("could not enqueue the knowledge vector fill; the tick runs it")


def knowledge_vectors_fill(*, max_chunks: int = INDEX_ROUND, batch: int | None = None) -> int:
    """Embed up to ``max_chunks`` chunks that lack a vector of the current model, ``batch`` at a time.

    Runs only in the background (a task, the tick), never on a request: like the memory layers'
    backfill it takes the process's embedding model, loading it in the worker when it must. At most 3
    attempts a chunk; packs with local embedding off are skipped. ``batch``: chunks an inference (None:
    ``INDEX_BATCH`` while a lookup of this process runs, else ``INDEX_BATCH_IDLE``). Returns the number
    of chunks it tried."""
    with storage_writer() as allowed, exclusive_work("knowledge-vectors") as held:
        if not allowed or not held:
            return 0
        return _vectors_fill(max_chunks=max_chunks, batch=batch)


def _vectors_fill(*, max_chunks: int, batch: int | None) -> int:
    # Not ``knowledge_ready()``: the task cluster never runs the server's startup, and the storage
    # block is already honoured by ``storage_writer``.
    if not selectors.knowledge_store().enabled or not _vectors_wanted():
        return 0
    embedder = embeddings.get_embedder()
    if embedder is None:
        return 0
    model_id = embedder.model_id
    processed = 0
    stored_any = False
    while processed < max_chunks:
        size = batch or (INDEX_BATCH if lookups_in_flight.running() else INDEX_BATCH_IDLE)
        rows = list(
            KnowledgeChunk.objects.filter(
                version__installed_as__local_embedding=True,
                version__installed_as__broken=False,
                failed=False,
            )
            .exclude(vector__isnull=False, model_id=model_id)
            .select_related("entry")
            .order_by("id")[: min(size, max_chunks - processed)]
        )
        if not rows:
            break
        started = time.monotonic()
        texts = [
            chunk_embed_text(
                title=row.entry.title, summary=row.entry.summary, chunk=row.text, first=row.ordinal == 0
            )
            for row in rows
        ]
        try:
            vectors = embedder.embed(texts)
        except Exception:
            vectors = None
        stored = failed = 0
        with transaction.atomic():
            # One statement for the batch, not one update a row.
            table = connection.ops.quote_name(KnowledgeChunk._meta.db_table)
            with connection.cursor() as cursor:
                if vectors is not None:
                    cursor.executemany(
                        f"UPDATE {table} SET vector = %s, model_id = %s, attempts = 0, failed = %s "
                        "WHERE id = %s",
                        [
                            (vectors[at].astype("<f4").tobytes(), model_id, False, row.pk)
                            for at, row in enumerate(rows)
                        ],
                    )
                    stored = len(rows)
                else:
                    cursor.executemany(
                        f"UPDATE {table} SET attempts = %s, failed = %s WHERE id = %s",
                        [
                            (row.attempts + 1, row.attempts + 1 >= KnowledgeChunk.MAX_ATTEMPTS, row.pk)
                            for row in rows
                        ],
                    )
                    failed = sum(row.attempts + 1 >= KnowledgeChunk.MAX_ATTEMPTS for row in rows)
            IndexBatch.objects.create(
                model_id=model_id,
                selected=len(rows),
                stored=stored,
                failed=failed,
                elapsed_ms=int((time.monotonic() - started) * 1000),
            )
            diagnostics_trim(IndexBatch)
        processed += len(rows)
        stored_any = stored_any or stored > 0
        if not stored:
            break
    if stored_any:
        # Once a round, not once a batch: every change of the version rebuilds the lookups' index.
        with transaction.atomic():
            store_changed(vectors_only=True)
    return processed


def _vectors_wanted() -> bool:
    """Some chunk of a sound, embedding pack may still get a vector (so an idle fill loads no model)."""
    return KnowledgeChunk.objects.filter(
        version__installed_as__local_embedding=True, version__installed_as__broken=False, failed=False
    ).exists()


def knowledge_vectors_fill_until_done(
    *, seconds: float = FILL_TASK_SECONDS, round_chunks: int = INDEX_ROUND
) -> int:
    """The fill task: rounds until every chunk has its vector, or ``seconds`` pass; then it hands the
    rest to a fresh task, so one large pack is embedded within minutes rather than a round a minute,
    and no task holds a worker for long."""
    deadline = time.monotonic() + seconds
    total = 0
    while time.monotonic() < deadline:
        tried = knowledge_vectors_fill(max_chunks=round_chunks)
        total += tried
        if tried < round_chunks:
            return total
    vectors_enqueue()
    return total
