"""The compiled BM25 scoring loop against the numpy arithmetic it replaced, bit for bit.

``Bm25View.term_scores`` adds each posting's contribution in one compiled pass (``recall/engine/
kernels.py``). The numpy steps below are the arithmetic it replaced (gather, convert, multiply,
divide, ``np.add.at``), kept here as the cross-check: every score must be the same float32 value, the
rows listed in ``scored`` the rows that hold a query term, on every shape of index (frozen columns,
rows removed, a tail of appended rows, the sorted segment those merge into, weighted terms).
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recall.engine.bm25 import BM25_K1, LEXICAL_VIEWS, TAIL_POSTINGS, Bm25View, term_hash
from recall.engine.kernels import kernels_compile

pytestmark = pytest.mark.django_db

WORDS = ["cat", "dog", "cello", "tea", "rain", "park", "猫", "狗", "我", "的", "喜欢", "上周", "泰山", "x"]


def numpy_scores(
    view: Bm25View, tokens: list[str], weights: list[float] | None = None
) -> tuple[np.ndarray, set]:
    """The numpy arithmetic of ``term_scores`` before the compiled loop, and the rows it scored."""
    scores = np.zeros(view.size, dtype=np.float32)
    if not view._live or not tokens:
        return scores, set()
    keys = np.fromiter((term_hash(t) for t in tokens), dtype=np.int64, count=len(tokens))
    term, rows, tfs, counts = view._postings(keys)
    if not term.size:
        return scores, set()
    live = view._alive[rows] if view._live < view.size else None
    df = counts if live is None else np.bincount(term[live], minlength=keys.size)
    idf = np.array([math.log1p((view._live - n + 0.5) / (n + 0.5)) for n in df.tolist()], dtype=np.float32)
    if weights is not None:
        idf *= np.asarray(weights, dtype=np.float32)
    tf = tfs.astype(np.float32)
    contribution = np.repeat(idf, counts)
    contribution *= tf
    contribution *= np.float32(BM25_K1 + 1)
    denominator = view._row_norms()[rows]
    denominator += tf
    contribution /= denominator
    np.add.at(scores, rows, contribution)
    if live is not None:
        scores[~view._alive] = 0.0
    return scores, set(rows.tolist())


def assert_same(view: Bm25View, tokens: list[str], weights: list[float] | None = None) -> None:
    scored: list[np.ndarray] = []
    got = view.term_scores(tokens, weights, scored=scored)
    want, want_rows = numpy_scores(view, tokens, weights)
    assert got.dtype == np.float32
    assert np.array_equal(got.view(np.int32), want.view(np.int32)), tokens
    listed = np.concatenate(scored) if scored else np.zeros(0, dtype=np.int32)
    assert len(set(listed.tolist())) == listed.size  # each row once
    assert set(listed.tolist()) == want_rows


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))


def test_frozen_removed_tail_and_segment_score_as_the_numpy_arithmetic() -> None:
    rng = random.Random(7)
    view = Bm25View(LEXICAL_VIEWS["words"], [sentence(rng) for _ in range(300)])
    queries = [list(dict.fromkeys(sentence(rng).split())) for _ in range(40)] + [["nowhere"], WORDS]
    for query in queries:  # frozen columns only
        assert_same(view, query)
    for row in range(0, 300, 7):
        view.remove(row)
    for query in queries:  # frozen, rows removed: live document frequencies
        assert_same(view, query)
        assert_same(view, query, [rng.random() for _ in query])
    view.append([sentence(rng) for _ in range(20)])  # a tail
    assert view._tail_keys
    for query in queries:
        assert_same(view, query)
    view.append_flat(view.counted_flat([sentence(rng) for _ in range(50)]))  # the sorted segment
    view.remove(305)
    assert view._added_keys.size
    for query in queries:
        assert_same(view, query)
        assert_same(view, query, [rng.random() for _ in query])


def test_a_view_of_added_rows_only_scores_as_the_numpy_arithmetic() -> None:
    rng = random.Random(11)
    view = Bm25View(LEXICAL_VIEWS["words"])  # nothing frozen: every row in the sorted segment
    view.append_flat(view.counted_flat([sentence(rng) for _ in range(120)]))
    view.append([sentence(rng) for _ in range(5)])
    view.remove(3)
    assert not view._keys.size and view._added_keys.size and view._tail_keys
    for _ in range(30):
        query = list(dict.fromkeys(sentence(rng).split()))
        assert_same(view, query)
        assert_same(view, query, [rng.random() for _ in query])


def test_a_merged_tail_and_long_columns_score_as_the_numpy_arithmetic() -> None:
    text = "我 的 猫 " * 40
    view = Bm25View(LEXICAL_VIEWS["original"], [f"{text}{n}" for n in range(2_000)])
    rows = [f"上周末去了泰山 我的猫 {n}" for n in range(TAIL_POSTINGS // 4)]
    view.append(rows)  # past TAIL_POSTINGS: merged into the segment
    assert not view._tail_keys or len(view._tail_keys) < TAIL_POSTINGS
    for query in (["我的", "的猫", "泰山"], ["上周", "周末"], ["我的"]):
        assert_same(view, query)


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=10), min_size=1, max_size=40),
    removed=st.lists(st.integers(min_value=0, max_value=39), max_size=10),
    appended=st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=10), max_size=10),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=8, unique=True),
    weighted=st.booleans(),
)
def test_any_index_scores_as_the_numpy_arithmetic(texts, removed, appended, query, weighted) -> None:
    view = Bm25View(LEXICAL_VIEWS["words"], [" ".join(t) for t in texts])
    for row in removed:
        if row < view.size:
            view.remove(row)
    view.append([" ".join(t) for t in appended])
    weights = [0.5 + i / 10 for i in range(len(query))] if weighted else None
    assert_same(view, query, weights)


def test_the_loops_compile_before_serving() -> None:
    from nekomem.runtime.warmups import before_serving_order

    kernels_compile()  # a second call loads what the first compiled
    assert "bm25-kernels" in before_serving_order()
