"""What a row's place in its conversation adds to a query: the reply context (a row raised by the turn
it answers or that answers it), pseudo-relevance feedback from the best rows, and a when-question's
dated rows first. A part of ``RecallIndex`` (its base class), kept apart by subject."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from recall.engine.bm25 import Bm25View
from recall.engine.columns import NO_TIME, RowStore
from recall.engine.configs import RecallConfig
from recall.engine.fusion import top_rows
from recall.questions import says_when


class RowContext:
    """The reply context, feedback and when-first passes of ``RecallIndex`` over its columns."""

    views: dict[str, Bm25View]
    rows: RowStore
    stop_names: tuple[str, ...]
    order: np.ndarray
    alive: np.ndarray
    span_start: np.ndarray
    changed_rows: int
    _links: tuple[tuple[Any, ...], tuple[tuple[np.ndarray, np.ndarray], np.ndarray]] | None
    _late_view: Callable[[str], Bm25View]

    def _feedback(
        self, query: str, fused: list[tuple[int, float]], config: RecallConfig, *, scored: list[np.ndarray]
    ) -> np.ndarray | None:
        """Pseudo-relevance feedback (RM3's expansion): the terms the best fused rows share, weighted by
        how often they occur there (each row by its fused score) and how rare they are in the pool, scored
        as a query of their own over the words view. None: no term to add."""
        view = self.views.get("words") or self._late_view("words")
        asked = set(view.tokenizer(query, self.stop_names))
        best = fused[0][1] or 1.0
        mass: dict[str, float] = {}
        for row, score in fused[: config.feedback_docs]:
            tokens = view.tokenizer(self.rows.strings[row][1], self.stop_names)
            for token in tokens:
                if token not in asked:
                    mass[token] = mass.get(token, 0.0) + (score / best) / len(tokens)
        if not mass:
            return None
        terms = list(mass)
        weight = np.asarray([mass[t] for t in terms], dtype=np.float32) * view.idf(terms)
        keep = np.argsort(-weight, kind="stable")[: config.feedback_terms]
        keep = keep[weight[keep] > 0]
        if keep.size == 0:
            return None
        chosen = weight[keep] / weight[keep].sum()
        return view.term_scores([terms[i] for i in keep.tolist()], chosen.tolist(), scored=scored)

    def _ranked(
        self,
        scores: np.ndarray,
        scored: list[np.ndarray] | None,
        allowed: np.ndarray,
        floor: float,
        threshold: float,
        config: RecallConfig,
    ) -> tuple[np.ndarray, list[int]]:
        """A path's scores in context and its top rows. ``scored``: the only rows with a score (its
        terms' postings, a large pool's rescored rows; None: any row), so neither step scans the pool."""
        scores = self._in_context(scores, allowed, floor, config, raised=scored, scored=scored)
        among = None if scored is None else (np.concatenate(scored) if scored else np.zeros(0, np.int64))
        return scores, top_rows(scores, allowed, threshold, config.per_path, order=self.order, among=among)

    def _in_context(
        self,
        scores: np.ndarray,
        allowed: np.ndarray,
        floor: float,
        config: RecallConfig,
        *,
        raised: list[np.ndarray] | None = None,
        scored: list[np.ndarray] | None = None,
    ) -> np.ndarray:
        """``scores`` (a path's own array: changed in place) with each row raised by
        ``config.context_weight`` × its best neighbour's score above ``floor`` (``_neighbours``); the
        rows raised are added to ``raised``. Only rows with a neighbour and above the floor lend
        anything, so the work follows the rows that have a neighbour (the raw turns), not the pool (a
        query at 100k), and no copy of the pool's scores is made. ``scored``: rows that include every
        row above the floor (a path's postings, a large pool's rescored rows; None: not known)."""
        if config.context_weight <= 0 or scores.size < 2:
            return scores
        sides, linked = self._neighbours(config)
        if linked.size == 0:
            return scores  # no row has a neighbour (facts, reflections: no known speakers)
        # Only rows with a neighbour and above the floor can lend: the pass is over the rows with a
        # neighbour, or over the scored rows when fewer (a query's postings: ~3k beside a 20k-turn raw
        # pool; a large pool's cosine: ~1k rescored). A row without a neighbour raises nothing (its
        # sides are −1), and one listed twice raises the same rows by the same amount twice.
        if scored is not None and sum(rows.size for rows in scored) < linked.size:
            lenders = np.concatenate(scored) if scored else linked[:0]
        else:
            lenders = linked
        lenders = lenders[scores[lenders] > floor]
        lenders = lenders[allowed[lenders]]
        if lenders.size == 0:
            return scores
        lift = (scores[lenders] - np.float32(floor)).astype(np.float32)
        weight = np.float32(config.context_weight)
        # Every raise is worked out from the scores as given before any is written; each side maps rows
        # one to one (a row has one row before it), and a row between two lenders takes the larger.
        raises = []
        for side in sides:
            target = side[lenders]
            keep = target >= 0
            keep[keep] &= allowed[target[keep]]
            target = target[keep]
            raises.append((target, scores[target] + weight * lift[keep]))
        for target, value in raises:
            scores[target] = np.maximum(scores[target], value)
            if raised is not None:
                raised.append(target)
        return scores

    def _neighbours(self, config: RecallConfig) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
        """Each row's neighbour before and after it (−1: none): the live rows of one pool in key order
        (facts by primary key, raw turns by key and so by time), two of them neighbours when created
        within ``context_gap`` of each other and, with ``context_replies``, said by different speakers
        (``Candidate.speaker``; rows whose speaker is not known get no reply context).
        By key, not by row, so an index that took changes has the neighbours a rebuilt one has. Kept
        until the rows change (the first query after a change sorts the live rows again)."""
        key = (len(self.alive), self.changed_rows, config.context_gap, config.context_replies)
        cached = self._links
        if cached is not None and cached[0] == key:
            return cached[1]
        n = len(self.alive)
        created = self.rows.created.micros()
        pools = self.rows.pools.codes()
        live = np.flatnonzero(self.alive & (created != NO_TIME))
        seq = live[np.lexsort((self.order[live], pools[live]))]
        a, b = seq[:-1], seq[1:]
        linked = (pools[a] == pools[b]) & (np.abs(created[b] - created[a]) <= int(config.context_gap * 1e6))
        if config.context_replies:
            # A question and its answer: two turns whose speakers are known and differ. Never by
            # ``entity``: it says whom a fact is about, and every fact of an original facts.json is
            # about the master (the rule then paired nothing, or any two facts the other way round).
            speakers = self.rows.speakers.codes()
            unknown = self.rows.speakers.code_of(None)
            linked &= (speakers[a] != speakers[b]) & (speakers[a] != unknown) & (speakers[b] != unknown)
        before = np.full(n, -1, dtype=np.int64)
        after = np.full(n, -1, dtype=np.int64)
        after[a[linked]] = b[linked]
        before[b[linked]] = a[linked]
        self._links = (key, ((before, after), np.union1d(a[linked], b[linked])))
        return self._links[1]

    def _when_first(self, fused: list[tuple[int, float]], bonus: float) -> list[tuple[int, float]]:
        """A when-question's candidates, the dated rows that say when they happened raised by ``bonus``
        (a row's "yesterday" answers "when?" only with the row's own date to read it against)."""
        texts, dated = self.rows.strings, ~np.isnan(self.span_start)
        raised = [
            (row, score + bonus if dated[row] and says_when(texts[row][1]) else score) for row, score in fused
        ]
        return sorted(raised, key=lambda item: -item[1])  # stable: ties keep the fused order
