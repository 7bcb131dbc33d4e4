"""The per-character recall index: columns built in one pass, answering hybrid and time queries."""

from __future__ import annotations

import math
import threading
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from nekomem.language.tokens import is_word_char
from recall.engine.bm25 import LEXICAL_VIEWS, Bm25View
from recall.engine.columns import RowStore
from recall.engine.configs import DEFAULT, RESULT_CAP, RecallConfig
from recall.engine.context import RowContext
from recall.engine.fusion import largest_rows, rrf_fuse, score_fuse, with_slots
from recall.engine.records import TIERS_BM25, TIERS_COSINE, Candidate, Hit, PathHit
from recall.engine.vectors import (
    VectorBuilder,
    held_nbytes,
    unit_rows,
    vectors_append,
    vectors_requantize,
    vectors_set,
    with_room,
)
from recall.questions import without_question_words
from recall.times import TimeWindow

RESCORE_ROWS = 1000
CHARS_PATH = "bm25:chars"  # the query's one-character words, over the ``chars`` view


class RecallIndex(RowContext):
    """Everything recall needs for one character's pools, built once and then kept up to date.

    Built in one pass over the candidates (an iterator is fine: a 100k-row pool is never held as
    Python objects), into columns: texts and ids as UTF-8 buffers, times as int64, vectors as float32
    (≤ ``EXACT_COSINE_ROWS`` rows: exact cosine) or int8 + a 64-d float32 projection (coarse then exact).

    Changes arrive as rows (``apply``): a changed or removed row is tombstoned, a new or changed one is
    appended, and a vector alone is filled in place. BM25 statistics follow the live rows exactly, and
    ties rank by the row's key (its primary key), so the answers equal those of an index rebuilt from
    the same rows. ``changed_rows`` tells the owner when a rebuild would pay (compaction).
    """

    matrix: np.ndarray | None
    coarse: np.ndarray | None
    projection: np.ndarray | None
    q8: np.ndarray | None
    q8_scale: np.ndarray | None
    has_vector: np.ndarray

    def __init__(
        self,
        candidates: Iterable[Candidate],
        *,
        stop_names: Sequence[str] = (),
        views: Sequence[str] = ("original", "words", "chars"),
        dim: int | None = None,
    ) -> None:
        self.lock = threading.RLock()  # queries and changes of one index take turns
        self.stop_names = tuple(stop_names)
        self.views = {name: Bm25View(LEXICAL_VIEWS[name], (), self.stop_names) for name in views}
        self.rows = RowStore()
        self.matrix = self.coarse = self.projection = self.q8 = self.q8_scale = None
        self._row_of: dict[tuple[str, int], int] = {}
        self.changed_rows = 0  # rows tombstoned or appended since the build
        self.filled_vectors = 0  # vectors filled in place since the build
        # pool → keys whose new vector is logged but not filled in yet (``defer_vectors``): part of the
        # index's state, so a saved index remembers them too.
        self.deferred_vectors: dict[str, set[int]] = {}
        # ``_neighbours`` (each row's neighbour before and after, the rows that have one) and the row
        # state they were found for.
        self._links: tuple[tuple[Any, ...], tuple[tuple[np.ndarray, np.ndarray], np.ndarray]] | None = None
        vectors: VectorBuilder | None = VectorBuilder(dim) if dim else None
        unvectored = 0  # rows seen before the first vector tells the dimension
        starts, ends, order = array("d"), array("d"), array("q")
        for c in candidates:
            if not _indexable(c):
                continue
            if vectors is None and c.vector is not None:
                vectors = VectorBuilder(int(np.asarray(c.vector).reshape(-1).shape[0]))
                for _ in range(unvectored):
                    vectors.append(None)
            row = len(self.rows)
            self.rows.append(c)
            for view in self.views.values():
                view.add(c.text)
            span = c.event_span()
            starts.append(span[0].timestamp() if span else math.nan)
            ends.append(span[1].timestamp() if span else math.nan)
            order.append(c.key if c.key is not None else row)
            if c.key is not None:
                self._row_of[(c.pool, c.key)] = row
            if vectors is None:
                unvectored += 1
            else:
                vector = None if c.vector is None else np.asarray(c.vector, dtype=np.float32).reshape(-1)
                vectors.append(vector)
        self.rows.strings.freeze()
        for view in self.views.values():
            view.freeze()
        n = len(self.rows)
        self.span_start = np.frombuffer(starts, dtype=np.float64).copy() if n else np.zeros(0)
        self.span_end = np.frombuffer(ends, dtype=np.float64).copy() if n else np.zeros(0)
        self.order = np.frombuffer(order, dtype=np.int64).copy() if n else np.zeros(0, np.int64)
        self.alive = np.ones(n, dtype=bool)
        self._live = n
        self.cosine_pool = self.rows.tiers.mask(TIERS_COSINE)
        if vectors is None:
            vectors = VectorBuilder(0)
            for _ in range(unvectored):
                vectors.append(None)
        self.dim = vectors.dim
        vectors.build(self)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["lock"]
        state["_links"] = None  # recomputed from the rows on the first query that needs it
        if self.matrix is not None:
            # Rows without a vector are zeros: saved as the rows that have one (a fresh import has none).
            state["matrix"] = (self.matrix.shape, self.matrix[self.has_vector])
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if state.get("matrix") is not None:
            shape, rows = state["matrix"]
            matrix = np.zeros(shape, dtype=np.float32)
            matrix[state["has_vector"]] = rows
            state["matrix"] = with_room(matrix)
        for name in ("q8", "q8_scale", "coarse"):
            if state.get(name) is not None:
                state[name] = with_room(state[name])
        state.setdefault("deferred_vectors", {})
        state["_links"] = None
        self.__dict__.update(state)
        self.lock = threading.RLock()

    @property
    def candidates(self) -> list[Candidate]:
        """Every live row as a record (tests and small tools; queries rebuild only their hits)."""
        return [self.rows.candidate(i) for i in np.flatnonzero(self.alive).tolist()]

    @property
    def nbytes(self) -> int:
        """Approximate bytes held by the index's arrays and buffers (a matrix's spare rows too: the
        recall cache's byte cap counts what the process holds)."""
        arrays = (self.matrix, self.coarse, self.projection, self.q8, self.q8_scale, self.has_vector)
        total = sum(held_nbytes(a) for a in arrays if a is not None)
        total += self.span_start.nbytes + self.span_end.nbytes + self.cosine_pool.nbytes + self.order.nbytes
        total += sum(v.nbytes for v in self.views.values())
        return total + self.rows.strings.nbytes

    def __len__(self) -> int:
        return self._live

    # --- changes -------------------------------------------------------------------------------------

    def pool_rows(self, pool: str) -> list[tuple[int, datetime]]:
        """(key, created_at) of the live rows of one pool."""
        out = []
        for (row_pool, key), row in self._row_of.items():
            created = self.rows.created[row] if row_pool == pool else None
            if created is not None:
                out.append((key, created))
        return out

    def row_of(self, pool: str, key: int) -> int | None:
        """The live row holding ``key`` of ``pool``, if any."""
        return self._row_of.get((pool, key))

    def apply(
        self,
        *,
        pool: str,
        upserts: Sequence[Candidate] = (),
        removed: Iterable[int] = (),
        vectors: Mapping[int, np.ndarray | None] | None = None,
    ) -> None:
        """Take changed rows of one pool: ``upserts`` replace (or add) rows by key, ``removed`` keys are
        tombstoned, ``vectors`` fill the vector of rows whose text did not change."""
        with self.lock:
            gone = []
            for key in [*removed, *(c.key for c in upserts if c.key is not None)]:
                row = self._row_of.pop((pool, key), None)
                if row is not None:
                    self._tombstone(row)
                    gone.append(row)
            self.rows.strings.blank(gone)  # a deleted text leaves no copy in memory or a later snapshot
            self._append([c for c in upserts if _indexable(c)])
            if vectors:
                self._fill_vectors(pool, vectors)

    def defer_vectors(self, pool: str, keys: Iterable[int]) -> None:
        """Note rows of ``pool`` whose vector changed, to be filled later (``fill_vectors``)."""
        with self.lock:
            self.deferred_vectors.setdefault(pool, set()).update(keys)

    def take_deferred_vectors(self, limit: int) -> dict[str, set[int]]:
        """Up to ``limit`` deferred keys, by pool, taken off the list (the caller fills them)."""
        taken: dict[str, set[int]] = {}
        with self.lock:
            for pool in list(self.deferred_vectors):
                keys = self.deferred_vectors[pool]
                while keys and limit > 0:
                    taken.setdefault(pool, set()).add(keys.pop())
                    limit -= 1
                if not keys:
                    del self.deferred_vectors[pool]
        return taken

    def _tombstone(self, row: int) -> None:
        for view in self.views.values():
            view.remove(row)
        self.alive[row] = False  # its text is blanked by the caller, once per block for all the rows
        self.has_vector[row] = False
        if self.matrix is not None:
            self.matrix[row] = 0.0  # as a row without a vector is (and is saved)
        self._live -= 1
        self.changed_rows += 1

    def _append(self, new: Sequence[Candidate]) -> None:
        if not new:
            return
        # Everything that can fail (tokenisers, spans, vectors) is worked out before the first change:
        # an exception halfway left rows without their postings or flags, and every later query or
        # change of the character failed on arrays of different lengths until the next build.
        texts = [c.text for c in new]
        counted = {name: view.counted(texts) for name, view in self.views.items()}
        spans = [c.event_span() for c in new]
        starts = [s[0].timestamp() if s else math.nan for s in spans]
        ends = [s[1].timestamp() if s else math.nan for s in spans]
        first = len(self.rows)
        keys = [c.key if c.key is not None else first + i for i, c in enumerate(new)]
        cosine = [c.tier in TIERS_COSINE for c in new]
        rows, has = unit_rows([c.vector for c in new], self.dim)
        for offset, c in enumerate(new):
            self.rows.append(c)
            if c.key is not None:
                self._row_of[(c.pool, c.key)] = first + offset
        self.rows.strings.freeze(trim=False)
        for name, view in self.views.items():
            view.append_counted(counted[name])
        self.span_start = np.concatenate((self.span_start, starts))
        self.span_end = np.concatenate((self.span_end, ends))
        self.order = np.concatenate((self.order, np.asarray(keys, dtype=np.int64)))
        self.alive = np.concatenate((self.alive, np.ones(len(new), dtype=bool)))
        self.cosine_pool = np.concatenate((self.cosine_pool, cosine))
        vectors_append(self, rows, has)
        self._live += len(new)
        self.changed_rows += len(new)

    def _fill_vectors(self, pool: str, vectors: Mapping[int, np.ndarray | None]) -> None:
        at, given = [], []
        for key, vector in vectors.items():
            row = self._row_of.get((pool, key))
            if row is not None and vector is not None and self.cosine_pool[row]:
                at.append(row)
                given.append(vector)
        rows, has = unit_rows(given, self.dim)
        vectors_set(self, np.asarray(at, dtype=np.int64)[has], rows[has])
        self.filled_vectors += int(has.sum())
        # An imported pool was built before its vectors: once the backfill has filled enough of them,
        # the float32 matrix (every row read by every query) becomes the large-pool encoding.
        vectors_requantize(self)

    @staticmethod
    def _floors(config: RecallConfig) -> dict[str, float]:
        floors = {f"bm25:{name}": 0.0 for name, _ in config.lexical}
        floors["cosine"] = config.cosine_threshold
        return floors

    def _cosine(
        self, q: np.ndarray, pool: np.ndarray, also: list[int]
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """Cosine of every row (exact), or of the coarse top rows plus ``also`` (large pools; others −1),
        and then the rows that have one (None: every row)."""
        if self.matrix is not None:
            return self.matrix @ q, None
        assert self.coarse is not None and self.projection is not None
        assert self.q8 is not None and self.q8_scale is not None
        approx = self.coarse @ (q @ self.projection)
        if not pool.all():
            approx[~pool] = -np.inf
        take = min(RESCORE_ROWS, approx.size)
        rows = largest_rows(approx, take)
        if also:
            rows = np.concatenate((rows, np.asarray(also, dtype=rows.dtype)))
        scores = np.full(approx.shape, -1.0, dtype=np.float32)
        scores[rows] = (self.q8[rows].astype(np.float32) @ q) * self.q8_scale[rows]
        return scores, rows

    # --- time ----------------------------------------------------------------------------------------

    def in_window(self, window: TimeWindow) -> np.ndarray:
        """Rows whose event span overlaps ``[start, end)``; rows without a timestamp never do."""
        start, end = window.start.timestamp(), window.end.timestamp()
        with np.errstate(invalid="ignore"):
            return (self.span_start < end) & (self.span_end >= start)

    def subject_mask(self, subjects: frozenset[str] | None) -> np.ndarray:
        """Group chat (reference §1.6): without subjects the private rows only; with subject keys
        (``<kind>:<subject_id>``) only those subjects' rows. Subject rows are few, so this walks them."""
        mask = (
            np.ones(len(self.alive), dtype=bool)
            if subjects is None
            else np.zeros(len(self.alive), dtype=bool)
        )
        for row, (kind, subject_id, _, _) in self.rows.rare.items():
            if subject_id:
                mask[row] = subjects is not None and f"{kind}:{subject_id}" in subjects
        return mask

    def by_time(
        self, window: TimeWindow, *, limit: int = RESULT_CAP, subjects: frozenset[str] | None = None
    ) -> list[Hit]:
        """§4.5 ``recall_by_time``: inside first, then by distance to the window, then newest start."""
        with self.lock:
            return self._by_time(window, limit=limit, subjects=subjects)

    def _by_time(self, window: TimeWindow, *, limit: int, subjects: frozenset[str] | None) -> list[Hit]:
        start, end = window.start.timestamp(), window.end.timestamp()
        dated = np.flatnonzero(~np.isnan(self.span_start) & self.alive & self.subject_mask(subjects))
        if dated.size == 0:
            return []
        s, e = self.span_start[dated], self.span_end[dated]
        inside = (s < end) & (e >= start)
        distance = np.where(inside, 0.0, np.maximum(s - end, 0.0) + np.maximum(start - e, 0.0))
        order = np.lexsort((self.order[dated], -s, distance, ~inside))[:limit]
        # The time path's own score is the distance to the window in seconds (0: inside it).
        return [
            Hit(
                candidate=self.rows.candidate(int(dated[i])),
                score=None,
                paths={"time": PathHit(rank=rank, score=float(distance[i]))},
            )
            for rank, i in enumerate(order.tolist(), start=1)
        ]

    # --- hybrid --------------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        config: RecallConfig = DEFAULT,
        query_vector: np.ndarray | Callable[[], np.ndarray | None] | None = None,
        window: TimeWindow | None = None,
        subjects: frozenset[str] | None = None,
        query_scaled: bool = False,
        asks_when: bool = False,
    ) -> list[Hit]:
        """Hybrid recall; ``window`` and ``subjects`` hard-filter every pool first (query + time routing).
        ``query_scaled``: the query vector is used as given (a weighted mix of a fused space's parts,
        whose dot product with a row is already the cosine to rank by), not made a unit vector.
        ``asks_when``: the query asks when something happened (``config.when_bonus``). ``query_vector``
        may be a function, called once the lexical paths are ranked (the vector computed beside them)."""
        with self.lock:
            return self._search(
                query,
                config=config,
                query_vector=query_vector,
                window=window,
                subjects=subjects,
                query_scaled=query_scaled,
                asks_when=asks_when,
            )

    def _search(
        self,
        query: str,
        *,
        config: RecallConfig,
        query_vector: np.ndarray | Callable[[], np.ndarray | None] | None,
        window: TimeWindow | None,
        subjects: frozenset[str] | None,
        query_scaled: bool = False,
        asks_when: bool = False,
    ) -> list[Hit]:
        if not query.strip() or not self._live:
            return []
        allowed = self.alive & self.subject_mask(subjects)
        if window is not None:
            allowed &= self.in_window(window)
            if not allowed.any():
                return []
        rankings: dict[str, list[int]] = {}
        weights: dict[str, float] = {}
        path_scores: dict[str, np.ndarray] = {}
        words = without_question_words(query) if config.question_words_out else query
        word_tokens: list[str] = []  # the words view's tokens of the query (no words view: none)
        if config.use_lexical:
            for view_name, weight in config.lexical:
                view = self.views.get(view_name)
                if view is None:
                    view = self.views[view_name] = self._late_view(view_name)
                # Tokenised once: the words view's tokens also give the query's one-character words.
                tokens = view.tokenizer(words, self.stop_names)
                if view_name == "words":
                    word_tokens = tokens
                # As ``view.scores``: the query's terms de-duplicated (§4.3).
                scored: list[np.ndarray] = []
                scores = view.term_scores(list(dict.fromkeys(tokens)), scored=scored)
                path = f"bm25:{view_name}"
                scores, rankings[path] = self._ranked(
                    scores, scored, allowed, 0.0, config.bm25_threshold, config
                )
                weights[path] = weight
                path_scores[path] = scores
            # The query's one-character words ("猫", "개"), which no 2/3-gram of a stored text matches:
            # scored over the chars view only when they are the whole query or the word paths found
            # nothing. A character left alone by a longer question ("你养了什么猫") would otherwise rank
            # every turn holding it beside the turns the question's words find (MemoryBank-cn and
            # MADial-ch both lost probes that way).
            chars = list(dict.fromkeys(t for t in word_tokens if is_word_char(t)))
            words_found = any(len(rows) for rows in rankings.values())
            if chars and (not words_found or len(chars) == len(set(word_tokens))):
                view = self.views.get("chars")
                if view is None:
                    view = self.views["chars"] = self._late_view("chars")
                scored = []
                scores = view.term_scores(chars, scored=scored)
                scores, rankings[CHARS_PATH] = self._ranked(
                    scores, scored, allowed, 0.0, config.bm25_threshold, config
                )
                weights[CHARS_PATH] = dict(config.lexical)["words"]
                path_scores[CHARS_PATH] = scores
        if callable(query_vector):
            query_vector = query_vector()
        if config.use_vectors and query_vector is not None and self.has_vector.any():
            q = np.asarray(query_vector, dtype=np.float32).reshape(-1)
            if q.shape[0] == self.dim:
                if not query_scaled:
                    q = q / max(float(np.linalg.norm(q)), 1e-12)
                pool = allowed & self.cosine_pool & self.has_vector
                lexical_rows = [row for rows in rankings.values() for row in rows]
                scores, rescored = self._cosine(q, pool, lexical_rows)
                threshold = config.cosine_threshold
                scores, rankings["cosine"] = self._ranked(
                    scores, None if rescored is None else [rescored], pool, threshold, threshold, config
                )
                weights["cosine"] = config.vector_weight
                path_scores["cosine"] = scores
        fused = self._fused(rankings, path_scores, weights, config)
        if config.feedback_docs and fused and config.use_lexical:
            scored = []
            expanded = self._feedback(words, fused, config, scored=scored)
            if expanded is not None:
                scores, rankings["bm25:feedback"] = self._ranked(
                    expanded, scored, allowed, 0.0, config.bm25_threshold, config
                )
                weights["bm25:feedback"] = config.feedback_weight
                path_scores["bm25:feedback"] = scores
                fused = self._fused(rankings, path_scores, weights, config)
        if asks_when and config.when_bonus:
            fused = self._when_first(fused, config.when_bonus)
        fused = with_slots(fused, rankings.get("cosine", []), path_scores.get("cosine"), config)
        positions = {path: {row: r for r, row in enumerate(rows, start=1)} for path, rows in rankings.items()}
        hits = []
        for row, score in fused:
            paths = {
                path: PathHit(rank=ranks[row], score=float(path_scores[path][row]))
                for path, ranks in positions.items()
                if row in ranks
            }
            hits.append(Hit(candidate=self.rows.candidate(row), score=score, paths=paths))
        return hits

    def _fused(
        self,
        rankings: dict[str, list[int]],
        path_scores: dict[str, np.ndarray],
        weights: dict[str, float],
        config: RecallConfig,
    ) -> list[tuple[int, float]]:
        if config.fusion != "score":
            return rrf_fuse(rankings, k=config.rrf_k, weights=weights)
        floors = self._floors(config)
        if config.floor == "list":
            floors = {p: float(path_scores[p][rows[-1]]) for p, rows in rankings.items() if len(rows) > 1}
        return score_fuse(rankings, path_scores, weights=weights, floors=floors)

    def _late_view(self, name: str) -> Bm25View:
        """A lexical view no index was built with (a benchmark's configuration), over the live rows."""
        view = Bm25View(LEXICAL_VIEWS[name], self.rows.strings.column(1), self.stop_names)
        for row in np.flatnonzero(~self.alive).tolist():
            view.remove(row)
        return view


def _indexable(c: Candidate) -> bool:
    # Hard filter (§4.2) before anything is indexed: empty text never becomes a row.
    return bool(c.text and c.text.strip()) and c.tier in TIERS_BM25
