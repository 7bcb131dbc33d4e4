"""django-q2 entry points of recall: the embedding backfill schedule."""

from __future__ import annotations

import logging
import time
from collections import Counter

from django.conf import settings

from nekomem.characters.locks import exclusive_work
from nekomem.embeddings import configured_profile, get_embedder
from nekomem.embeddings.profiles import get_profile
from nekomem.journal.broker import task_enqueue
from nekomem.runtime.tasks import SCHEDULED_TICK
from recall.backfill import (
    BACKFILL_LOCK,
    background_priority,
    characters_needing_vectors,
    characters_with_pairs_pending,
    embedding_backfill,
    fact_pairs_pass,
    raw_turn_vectors_prune_covered,
)
from recall.index_cache import recall_indexes_save_vectors
from recall.selectors import characters_with_unvectored_turns
from recall.services import recall_retention

logger = logging.getLogger(__name__)

BACKFILL_TASK = "recall.tasks.embedding_backfill_tick"
TICK_LIMIT = 2000  # rows per character per round: characters take turns within a tick
TICK_SECONDS = 50.0  # a tick keeps embedding until this long has passed (the schedule runs every minute)
# Rows of one character a tick embedded past which its saved index is saved again with them.
SAVE_INDEX_AFTER_ROWS = 2000
ROUND_PAUSE_SECONDS = 1.0  # between rounds that found only new turns: how stale a turn's vector gets


def embedding_backfill_tick(*, budget: float = TICK_SECONDS) -> int:
    """Embed missing vectors (facts, then uncovered raw turns) for every character that has some,
    round after round until none is left or the tick's time is up; returns how many were embedded.

    One tick runs at a time across the cluster (a second would embed the same rows again). A tick
    that runs out of time with work left enqueues the next one at once, so a large import takes the
    CPU the machine spares without waiting for the schedule between ticks.
    """
    if not settings.EMBEDDINGS_ENABLED:
        return 0
    with exclusive_work(BACKFILL_LOCK) as held:
        if not held:
            return 0
        embedded, unfinished = _tick(budget=budget)
    if unfinished:
        _enqueue_next_tick()
    return embedded


def _waiting(model_id: str) -> list[int]:
    facts = characters_needing_vectors(model_id=model_id)
    return facts + [c for c in characters_with_unvectored_turns(model_id=model_id) if c not in facts]


def _tick(*, budget: float) -> tuple[int, bool]:
    raw_turn_vectors_prune_covered()
    model_id = get_profile(configured_profile()).model_id
    # Asked by model id first, so an idle tick never loads the model (~1 s and ~120 MB per task worker).
    waiting = _waiting(model_id)
    pairs = characters_with_pairs_pending()
    if not (waiting or pairs) or get_embedder() is None:
        return 0, False
    deadline = time.monotonic() + budget
    embedded = 0
    by_character: Counter[int] = Counter()
    while waiting and time.monotonic() < deadline:
        done = 0
        backlog = False  # a character had more than a round's rows (an import)
        for character_id in waiting:
            report = embedding_backfill(character_id=character_id, limit=TICK_LIMIT, queue_pairs=False)
            embedded += report.embedded
            by_character[character_id] += report.embedded
            done += report.embedded + report.marked
            backlog = backlog or report.embedded + report.marked >= TICK_LIMIT
        waiting = _waiting(model_id) if done else []
        if waiting and not backlog:
            # What waits now came in during the round: a chat's new turns. Without a pause the tick
            # polled every character every few milliseconds and embedded a turn at a time, and each
            # batch made every HTTP worker catch its index up; a pause gathers them into one batch.
            time.sleep(max(0.0, min(ROUND_PAUSE_SECONDS, deadline - time.monotonic())))
    # Saved indexes completed with what this tick embedded, when that is many rows (an import's): a
    # worker that starts, or takes the character back after an eviction, loads them with the file.
    _save_indexes([c for c, n in by_character.items() if n >= SAVE_INDEX_AFTER_ROWS])
    # Paraphrase pairs only for characters whose vectors are all in: after a large import the pairs
    # (every new fact against every other) would otherwise hold up the vectors queries need.
    embedder = get_embedder()
    # The backfill above writes vectors, so what is pending is read again only if it wrote any.
    for character_id in characters_with_pairs_pending() if embedded else pairs:
        if character_id in waiting or time.monotonic() >= deadline or embedder is None:
            continue
        with background_priority():
            fact_pairs_pass(character_id=character_id, embedder=embedder)
    return embedded, bool(waiting)


def _save_indexes(character_ids: list[int]) -> None:
    try:
        with background_priority():
            recall_indexes_save_vectors(character_ids)
    except Exception:
        logger.exception("recall indexes not saved with their vectors (workers fill them on load)")


def _enqueue_next_tick() -> None:
    try:
        # Through the schedules' gate, like every tick: it waits while storage is blocked.
        task_enqueue(
            SCHEDULED_TICK, BACKFILL_TASK, task_name="embedding-backfill-next", group="embedding-backfill"
        )
    except Exception:
        logger.exception("could not enqueue the next backfill tick; the schedule runs it within a minute")


def recall_retention_tick() -> dict[str, int]:
    report = recall_retention()
    return {"fact_vectors": report.fact_vectors, "snapshots": report.snapshots}


def recall_indexes_prepare_task(character_ids: list[int]) -> None:
    """After an import: the characters' recall indexes built and saved here, off the import."""
    from recall.index_cache import recall_indexes_build

    with background_priority():
        recall_indexes_build(character_ids)
