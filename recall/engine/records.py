"""The plain records recall passes around: a recallable row (``Candidate``) and what a query returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

TIERS_BM25 = frozenset({"fact", "reflection", "fact_archive", "raw_turn"})
# The archive is searched by BM25 and time only (§2.5); raw turns by cosine too once they have vectors.
TIERS_COSINE = frozenset({"fact", "reflection", "raw_turn"})


@dataclass(frozen=True)
class Candidate:
    """One recallable row, whatever layer it comes from."""

    id: str
    text: str
    tier: str  # fact | reflection | fact_archive | raw_turn
    entity: str = "master"
    created_at: datetime | None = None
    event_start_at: datetime | None = None
    event_end_at: datetime | None = None
    vector: np.ndarray | None = None  # a valid unit vector of the current model, or None
    subject_kind: str | None = None
    subject_id: str | None = None
    scope: str | None = None
    evidence_score: float = 0.0
    pool: str = ""  # the layer the row comes from (``facts.models.RECALL_POOL``…), for changes by key
    key: int | None = None  # its primary key in that pool: changes find the row by it, ties rank by it
    # Who said the row in its conversation, when the row is a turn of one ("human" / "ai": a raw-log
    # message's role): the reply context pairs a question with its answer by it. None: not known (a
    # fact says whom it is about, ``entity``, not which turn it came from), so no reply context.
    speaker: str | None = None

    def event_span(self) -> tuple[datetime, datetime] | None:
        """§4.5: [start, end]; one end alone stands for both; neither → created_at; else None."""
        start, end = self.event_start_at, self.event_end_at
        if start is None and end is None:
            start = end = self.created_at
        elif start is None:
            start = end
        elif end is None:
            end = start
        if start is None or end is None:
            return None
        return start, end


@dataclass
class PathHit:
    rank: int  # 1-based place in the path's own list
    score: float  # BM25 or cosine; on the time path, seconds between the row and the window (0: inside)


@dataclass
class Hit:
    candidate: Candidate
    score: float | None  # fused score; None on the time path
    paths: dict[str, PathHit] = field(default_factory=dict)
