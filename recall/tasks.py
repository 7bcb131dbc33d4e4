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
    vectors_pending,
)
from recall.index_cache import recall_indexes_save_vectors
from recall.selectors import characters_with_unvectored_turns
from recall.services import recall_retention
from recall.snapshots import backlog_drop, backlog_mark, backlog_since, backlogs_marked

logger = logging.getLogger(__name__)

BACKFILL_TASK = "recall.tasks.embedding_backfill_tick"
TICK_LIMIT = 2000  # rows per character per round: characters take turns within a tick
TICK_SECONDS = 50.0  # a tick keeps embedding until this long has passed (the schedule runs every minute)
# Rows of one character a tick embedded from which on they are a backlog (an import's), whose saved
# index is saved again with its vectors once the backlog is drained: a start then loads them.
SAVE_INDEX_AFTER_ROWS = 2000
# A backlog still draining is saved at most this often, so a crash mid-backlog leaves a recent file.
# Not after every tick: each save loads the file and fills every vector since (~0.3 ms each), which
# after every tick of a 100k import held the backfill up ~30 s (bench/recall_realistic).
SAVE_INDEX_EVERY_SECONDS = 300.0
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
        _save_indexes(_backlogs_due(Counter(), waiting=waiting))  # a tick that died before it saved
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
    # Saved indexes completed with a backlog's vectors (an import's) once it is drained: a worker that
    # starts, or takes the character back after an eviction, loads them with the file.
    _save_indexes(_backlogs_due(by_character, waiting=waiting))
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


def _backlogs_due(by_character: Counter[int], *, waiting: list[int]) -> dict[int, bool]:
    """The characters whose saved index is due to be saved with a backlog's vectors, each with whether
    its backlog is drained: a tick that embedded many rows of a character begins a backlog (marked on
    disk, so the next tick, in any task worker, carries it on); it is saved when no vector of the
    character waits any more, when the next tick will likely drain it, or when it began (or was last
    saved) SAVE_INDEX_EVERY_SECONDS ago."""
    now = time.time()
    due: dict[int, bool] = {}
    for character_id in {*by_character, *backlogs_marked()}:
        since = backlog_since(character_id=character_id)
        if since is None:
            if by_character[character_id] < SAVE_INDEX_AFTER_ROWS:
                continue
            since = backlog_mark(character_id=character_id)
            if since is None:
                continue  # indexes are not saved here
        drained = character_id not in waiting
        if drained or now - since >= SAVE_INDEX_EVERY_SECONDS or _drains_next(character_id, by_character):
            due[character_id] = drained
    return due


def _drains_next(character_id: int, by_character: Counter[int]) -> bool:
    """Whether the next tick will likely drain the character's backlog (fewer rows wait than this tick
    embedded): saved now, so the save once it is drained fills only that tick's vectors. Otherwise it
    fills every vector since the newest file (~36 000 at 100k: tens of seconds on a loaded machine),
    and a start during that loads the older file."""
    embedded = by_character[character_id]
    if not embedded:
        return False
    model_id = get_profile(configured_profile()).model_id
    return vectors_pending(character_id=character_id, model_id=model_id) <= embedded


def _save_indexes(due: dict[int, bool]) -> None:
    if not due:
        return
    started = time.monotonic()
    try:
        with background_priority():
            saved = recall_indexes_save_vectors(sorted(due))
        for character_id, drained in due.items():
            if drained:
                backlog_drop(character_id=character_id)
            else:
                backlog_mark(character_id=character_id)  # the next save SAVE_INDEX_EVERY_SECONDS on
        logger.info(
            "recall indexes saved after the backfill characters=%d saved=%d ms=%d",
            len(due),
            saved,
            (time.monotonic() - started) * 1000,
        )
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
