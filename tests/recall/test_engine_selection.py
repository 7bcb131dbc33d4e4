"""The engine's row selection shortcuts answer exactly as the whole-pool steps they replace (no database)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from recall.engine import DEFAULT, Candidate, RecallIndex
from recall.engine.fusion import largest_rows, top_rows
from tests.recall.support import turn

# Pure tests, but the session's startup fixture needs the test database to exist when run alone.
pytestmark = pytest.mark.django_db

LEXICAL = replace(DEFAULT, name="test-selection-bm25", use_vectors=False)


def argpartition_set(values: np.ndarray, k: int) -> set[int]:
    k = min(k, values.size)
    return set(np.argpartition(values, values.size - k)[values.size - k :].tolist()) if k else set()


@pytest.mark.parametrize(("n", "k"), [(120_000, 1000), (5000, 1000), (1000, 1000), (300, 1000), (50, 0)])
def test_largest_rows_are_the_rows_argpartition_takes(n: int, k: int) -> None:
    rng = np.random.default_rng(n + k)
    values = rng.standard_normal(n).astype(np.float32)
    values[rng.integers(0, n, n // 10)] = -np.inf  # rows outside the pool (``RecallIndex._cosine``)
    chosen = largest_rows(values, k)
    assert len(chosen) == min(k, n)
    assert set(chosen.tolist()) == argpartition_set(values, k)


def test_largest_rows_with_ties_at_the_cut_take_argpartitions_choice() -> None:
    values = np.zeros(20_000, dtype=np.float32)
    values[:500] = 1.0  # the other 500 of the top 1000 are among 19 500 equal values
    chosen = largest_rows(values, 1000)
    assert len(chosen) == 1000
    assert set(chosen.tolist()) == argpartition_set(values, 1000)


def test_largest_rows_of_a_sample_that_cut_too_high_are_still_exact() -> None:
    # Every large value off the sampled positions (multiples of the stride): the sample's cut is the
    # small values', and the rows above it are fewer than k only if the fallback is wrong.
    values = np.zeros(64_000, dtype=np.float32)
    values[np.arange(64_000) % 8 != 0] = np.linspace(1.0, 2.0, 56_000, dtype=np.float32)
    values[::8] = np.linspace(3.0, 4.0, 8000, dtype=np.float32)
    chosen = largest_rows(values, 1000)
    assert set(chosen.tolist()) == argpartition_set(values, 1000)


def test_top_rows_among_given_rows_equal_the_whole_scan() -> None:
    rng = np.random.default_rng(7)
    scores = np.zeros(50_000, dtype=np.float32)
    scored = rng.integers(0, scores.size, 2000)
    scores[scored] = rng.random(scored.size).astype(np.float32)
    allowed = rng.random(scores.size) > 0.1
    order = rng.permutation(scores.size).astype(np.int64)
    among = np.concatenate((scored, scored[:500]))  # a row listed twice (two terms) counts once
    assert among.size * 16 < scores.size  # the rows given are read alone, not the pool
    fast = top_rows(scores, allowed, 0.2, 20, order=order, among=among)
    assert fast == top_rows(scores, allowed, 0.2, 20, order=order)
    assert len(fast) == 20


def talk(turns: int) -> list[Candidate]:
    # Question-and-answer pairs a minute apart (every row has a neighbour), pairs a day apart.
    rows = []
    for i in range(turns):
        speaker = "master" if i % 2 == 0 else "neko"
        minutes = (i // 2) * 1440 + i % 2
        rows.append(turn(i, f"Small talk {i} about the weather", entity=speaker, minutes=minutes))
    return rows


def test_a_rare_words_reply_context_comes_from_its_postings() -> None:
    # One posting against 80 rows with a neighbour: the lenders are read from the postings.
    rows = talk(80)
    rows[40] = replace(rows[40], text="Did you paint the lighthouse?")
    rows[41] = replace(rows[41], text="Yes, in three weeks.")
    index = RecallIndex(rows)
    assert [h.candidate.id for h in index.search("lighthouse", config=LEXICAL)] == ["t40", "t41"]


def test_context_from_the_scored_rows_equals_context_from_every_linked_row() -> None:
    index = RecallIndex(talk(400))
    _sides, linked = index._neighbours(DEFAULT)
    rng = np.random.default_rng(3)
    scored = [rng.choice(linked, 60), rng.choice(len(index), 30)]  # some rows twice, some unlinked
    scores = np.zeros(len(index), dtype=np.float32)
    for rows in scored:
        scores[rows] = rng.random(rows.size).astype(np.float32) + 0.05
    allowed = rng.random(len(index)) > 0.2
    assert sum(rows.size for rows in scored) < linked.size
    by_postings: list[np.ndarray] = []
    by_links: list[np.ndarray] = []
    fast = index._in_context(scores.copy(), allowed, 0.0, DEFAULT, raised=by_postings, scored=scored)
    whole = index._in_context(scores.copy(), allowed, 0.0, DEFAULT, raised=by_links)
    assert np.array_equal(fast, whole)
    assert not np.array_equal(whole, scores)  # the context raised some rows
    assert set(np.concatenate(by_postings).tolist()) == set(np.concatenate(by_links).tolist())
