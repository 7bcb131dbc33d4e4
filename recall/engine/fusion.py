"""Fusing the paths' rankings (RRF or normalised scores) and picking a path's top rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from recall.engine.configs import RecallConfig


def rrf_fuse(
    rankings: Mapping[str, Sequence[int]], *, k: int = 60, weights: Mapping[str, float] | None = None
) -> list[tuple[int, float]]:
    """Weighted reciprocal-rank fusion: Σ w/(k + rank), ranks 1-based; best first, ties by first seen."""
    fused: dict[int, float] = {}
    for path, rows in rankings.items():
        weight = (weights or {}).get(path, 1.0)
        for rank, row in enumerate(rows, start=1):
            fused[row] = fused.get(row, 0.0) + weight / (k + rank)
    order = sorted(fused.items(), key=lambda item: -item[1])  # stable: ties keep insertion order
    return order


def score_fuse(
    rankings: Mapping[str, Sequence[int]],
    scores: Mapping[str, np.ndarray],
    *,
    weights: Mapping[str, float] | None = None,
    floors: Mapping[str, float] | None = None,
) -> list[tuple[int, float]]:
    """Normalised score fusion over the union of the candidate lists: each path's score is mapped to
    [0, 1] between its floor and its best listed score, weighted and summed."""
    union = list(dict.fromkeys(row for rows in rankings.values() for row in rows))
    at = np.asarray(union, dtype=np.int64)
    # In float64 and path by path, as a sum of Python floats per row would add them: the same scores
    # bit for bit, without a Python step per row and path (twice a query with the feedback terms).
    fused = np.zeros(at.size, dtype=np.float64)
    for path, rows in rankings.items():
        if not rows:
            continue
        weight = (weights or {}).get(path, 1.0)
        floor = (floors or {}).get(path, 0.0)
        column = scores[path]
        top = float(column[rows[0]])
        span = max(top - floor, 1e-9)
        fused += weight * np.clip((column[at].astype(np.float64) - floor) / span, 0.0, 1.0)
    order = np.argsort(-fused, kind="stable")  # ties keep the union's order, as a stable sort does
    return list(zip(at[order].tolist(), fused[order].tolist(), strict=True))


def with_slots(
    fused: list[tuple[int, float]],
    cosine_rows: Sequence[int],
    cosine: np.ndarray | None,
    config: RecallConfig,
) -> list[tuple[int, float]]:
    """The first ``config.total`` fused rows, where the cosine path's top ``cosine_slots`` rows (at
    cosine ≥ ``slot_cosine``) that fell outside take the places of the lowest fused ones, in fused order."""
    top = fused[: config.total]
    if config.cosine_slots <= 0 or cosine is None:
        return top
    kept = {row for row, _ in top}
    wanted = [
        row
        for row in cosine_rows[: config.cosine_slots]
        if row not in kept and float(cosine[row]) >= config.slot_cosine
    ]
    if not wanted:
        return top
    protected = set(cosine_rows[: config.cosine_slots])
    score_of = dict(fused)
    out = list(top)
    for row in wanted:
        for i in range(len(out) - 1, -1, -1):
            if out[i][0] not in protected:
                del out[i]
                break
        else:
            break
        out.append((row, score_of.get(row, 0.0)))
    return sorted(out, key=lambda item: -item[1])


AMONG_SHARE = 16  # ``among`` is read alone only while it is under 1/16 of the pool
# ``largest_rows`` estimates its cut from every SAMPLE_STRIDE-th value, aiming at CUT_MARGIN × k rows
# above it: enough that an unlucky sample rarely leaves fewer than k (then the full partition runs).
SAMPLE_STRIDE = 8
CUT_MARGIN = 2


def largest_rows(values: np.ndarray, k: int) -> np.ndarray:
    """The positions of the ``k`` largest ``values`` (any order): the set ``np.argpartition`` gives.

    A 120k-row pool's coarse cosine partitioned whole took ~1.5 ms a query; a cut estimated on a strided
    sample keeps ~2k rows, partitioned instead (~0.2 ms). Exactly k values at or above the k-th largest
    means no tie at the cut, so that set is the one argpartition returns; a tie (or a sample that cut
    too high) takes argpartition itself, whose choice among equal values is its own. ``values`` hold no
    NaN (argpartition ranks one above every number; the coarse scores of finite vectors have none)."""
    n = values.size
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k >= n:
        return np.arange(n)
    sample = values[::SAMPLE_STRIDE]
    aim = CUT_MARGIN * k // SAMPLE_STRIDE
    if aim < sample.size:
        cut = np.partition(sample, sample.size - aim)[sample.size - aim]
        near = np.flatnonzero(values >= cut)
        if near.size >= k:
            kth = np.partition(values[near], near.size - k)[near.size - k]
            chosen = near[values[near] >= kth]
            if chosen.size == k:
                return chosen
    return np.argpartition(values, n - k)[n - k :]


def top_rows(
    scores: np.ndarray,
    allowed: np.ndarray,
    threshold: float,
    limit: int,
    *,
    order: np.ndarray | None = None,
    among: np.ndarray | None = None,
) -> list[int]:
    """Row numbers of the best ``limit`` scores ≥ threshold (and > 0) among allowed rows; ties by
    ``order`` (the rows' keys), else by row. ``among``: the only rows that can pass (a large pool's
    cosine: the rescored rows and those their context raised), so the others are not scanned."""
    if among is None or among.size * AMONG_SHARE > scores.size:
        # Common terms' postings span much of the pool: one scan costs less than sorting them.
        keep = np.flatnonzero(allowed & (scores >= threshold) & (scores > 0))
    else:
        # In row order, as the scan would list them, each once: marked in a flag per row rather than
        # sorted (``np.unique`` of a query's ~5k postings and raised rows: ~0.3 ms of three paths').
        marked = np.zeros(scores.size, dtype=bool)
        marked[among] = True
        among = np.flatnonzero(marked)
        at = scores[among]
        keep = among[allowed[among] & (at >= threshold) & (at > 0)]
    if keep.size == 0 or limit <= 0:
        return []
    if keep.size > limit:
        # Partial selection first: sorting every matching row costs more than scoring them at 100k.
        cut = np.partition(scores[keep], keep.size - limit)[keep.size - limit]
        keep = keep[scores[keep] >= cut]
    ties = keep if order is None else order[keep]
    ranked = keep[np.lexsort((ties, -scores[keep]))]
    return ranked[:limit].tolist()
