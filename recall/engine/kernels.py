"""The BM25 views' scoring loop, compiled (numba): one pass over a query's postings.

A long question (a pasted dialogue, ~80 distinct terms in the original view) reaches ~500k postings
at 100k rows, most of them in the columns of a few common characters. Scored with numpy, each posting
went through eight whole-array steps (gathered, converted, multiplied, divided, added with
``np.add.at``): ~7 ms of such a query. Here each posting is read once and its contribution added at
once, with the same float32 operations in the same order, so every score is the same bit for bit
(``tests/recall/test_bm25_kernels.py`` checks it against the numpy arithmetic). The loops release the
GIL: a request scoring here leaves the interpreter to the process's other threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def add_ranges(
    scores: np.ndarray,
    seen: np.ndarray,
    touched: np.ndarray,
    rows: np.ndarray,
    tfs: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    idf: np.ndarray,
    norm: np.ndarray,
    k1_plus_1: np.float32,
) -> int:
    """Add ``idf·tf·(k1 + 1) / (tf + norm)`` of the postings ``starts[t] … ends[t] - 1`` of each term
    ``t`` in turn (``rows``, ``tfs``: a view's frozen columns, or postings listed by term) to
    ``scores``; list each row scored in ``touched``, once (``seen``: a flag per row); return how many."""
    n = 0
    for t in range(starts.size):
        weight = idf[t]
        for p in range(starts[t], ends[t]):
            row = rows[p]
            frequency = np.float32(tfs[p])
            contribution = weight * frequency
            contribution = contribution * k1_plus_1
            scores[row] += contribution / (norm[row] + frequency)
            if not seen[row]:
                seen[row] = True
                touched[n] = row
                n += 1
    return n


@njit(cache=True, nogil=True)
def live_in_ranges(rows: np.ndarray, alive: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """How many live rows each range of ``rows`` lists (a term's document frequency once rows were
    removed)."""
    counts = np.zeros(starts.size, dtype=np.int64)
    for t in range(starts.size):
        for p in range(starts[t], ends[t]):
            if alive[rows[p]]:
                counts[t] += 1
    return counts


def kernels_compile() -> None:
    """Compile (or load from numba's cache) the loops on a tiny index: a server does it before its
    first request, which would otherwise wait ~0.5 s for it."""
    rows = np.array([0, 1], dtype=np.int32)
    starts, ends = np.array([0], dtype=np.int64), np.array([2], dtype=np.int64)
    scores, norm, idf = np.zeros(2, np.float32), np.ones(2, np.float32), np.ones(1, np.float32)
    seen, tfs = np.zeros(2, np.bool_), np.ones(2, np.uint8)
    add_ranges(scores, seen, rows.copy(), rows, tfs, starts, ends, idf, norm, np.float32(2.5))
    live_in_ranges(rows, np.ones(2, np.bool_), starts, ends)
