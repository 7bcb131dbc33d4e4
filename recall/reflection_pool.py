"""The reflections pool of recall (reference §4.1): active reflections, tier ``reflection``.

Pending and confirmed reflections that are not suppressed and have text (the hard filter of §4.2 for
reflections: terminal statuses and suppressed rows never enter). Kept in its own module so the recall
rework and the reflections layer meet in one line of ``recall.selectors.RECALL_POOLS``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from nekomem.embeddings import VectorSpace
from nekomem.pages import values_in_pages
from recall.engine import Candidate
from reflections.models import RECALL_POOL, Reflection
from reflections.selectors import ACTIVE_STATUSES


def reflection_candidates(
    *, character_id: int, space: VectorSpace | None, keys: Collection[int] | None = None
) -> Iterator[Candidate]:
    """With ``keys``, only the reflections of those primary keys (the rows a memory change names)."""
    from recall.selectors.pools import (
        stored_vector,  # the pool list in recall.selectors.pools imports this module
    )

    reflections = Reflection.with_subjects.filter(
        character_id=character_id, status__in=ACTIVE_STATUSES, suppress=False
    )
    if keys is not None:
        reflections = reflections.filter(pk__in=list(keys))
    rows = reflections.order_by("pk").values_list(
        "pk",
        "reflection_id",
        "text",
        "entity",
        "created_at",
        "event_start_at",
        "event_end_at",
        "embedding",
        "embedding_text_sha256",
        "embedding_model_id",
        "extra",
    )
    for pk, rid, text, entity, created, start, end, vec, sha, model, extra in values_in_pages(
        rows, size=2000
    ):
        if not text or not text.strip():
            continue
        yield Candidate(
            id=rid,
            text=text,
            tier="reflection",
            entity=entity,
            created_at=created,
            event_start_at=start,
            event_end_at=end,
            vector=stored_vector(vector=vec, text_sha256=sha, model_id=model, text=text, space=space),
            subject_kind=extra.get("subject_kind") if isinstance(extra, dict) else None,
            subject_id=extra.get("subject_id") if isinstance(extra, dict) else None,
            scope=extra.get("scope") if isinstance(extra, dict) else None,
            pool=RECALL_POOL,
            key=pk,
        )
