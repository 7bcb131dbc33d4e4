"""Rows counted as flat arrays (``Bm25View.counted_flat``, what a child process hands back) and appended
by whole-array steps (``append_flat``) make the same view as the rows appended one by one: the same
scores bit for bit, the same rows per term, tombstones and a pending tail included."""

from __future__ import annotations

import numpy as np

from recall.engine import LEXICAL_VIEWS, Bm25View

BASE = ["绿茶 公园 散步", "rubber duck debugging", "早安 问候 绿茶", "coffee music video"]
ADDED = [
    "duck duck duck 绿茶 公园",
    "网络流行语 绝绝子 " + "绝绝子 " * 300,  # a term repeated past 255 counts 255
    "",
    "coffee 散步 rubber",
]
QUERIES = [["duck"], ["绿茶", "公园"], ["绝绝", "绝子"], ["coffee", "rubber", "散步"], ["absent"]]


def views() -> tuple[Bm25View, Bm25View]:
    made = []
    for _ in range(2):
        view = Bm25View(LEXICAL_VIEWS["words"], BASE)
        view.remove(1)
        view.append(["garden duck 绿茶"])  # a tail not merged yet
        made.append(view)
    return made[0], made[1]


def test_flat_rows_append_as_counted_rows_do() -> None:
    one_by_one, flat = views()
    one_by_one.append_counted(one_by_one.counted(ADDED))
    flat.append_flat(flat.counted_flat(ADDED))
    assert flat.size == one_by_one.size == len(BASE) + 1 + len(ADDED)
    assert flat.dead == one_by_one.dead == 1
    for terms in QUERIES:
        tokens = [token for term in terms for token in LEXICAL_VIEWS["words"](term, ())]
        assert np.array_equal(flat.term_scores(tokens), one_by_one.term_scores(tokens)), terms
        got_terms, got_rows = flat.term_rows(tokens)
        want_terms, want_rows = one_by_one.term_rows(tokens)
        assert sorted(zip(got_terms.tolist(), got_rows.tolist(), strict=True)) == sorted(
            zip(want_terms.tolist(), want_rows.tolist(), strict=True)
        )
    assert flat.term_scores(["duck"])[len(BASE) + 1] > 0  # the first added row scores


def test_flat_rows_hold_each_rows_terms_capped_counts_and_length() -> None:
    view = Bm25View(LEXICAL_VIEWS["words"])
    rows = view.counted_flat(ADDED)
    counted = view.counted(ADDED)
    assert rows.terms.tolist() == [len(counts) for counts, _ in counted]
    assert rows.lengths.tolist() == [length for _, length in counted]
    assert rows.keys.tolist() == [key for counts, _ in counted for key in counts]
    assert rows.tfs.tolist() == [min(tf, 255) for counts, _ in counted for tf in counts.values()]
    assert rows.tfs.max() == 255


def test_flat_rows_appended_to_a_fresh_view_answer_as_counted_rows_do() -> None:
    # Nothing appended since the freeze: the flat rows become the added segment as they are.
    one_by_one = Bm25View(LEXICAL_VIEWS["words"], BASE)
    flat = Bm25View(LEXICAL_VIEWS["words"], BASE)
    one_by_one.append_counted(one_by_one.counted(ADDED))
    flat.append_flat(flat.counted_flat(ADDED))
    flat.append_flat(flat.counted_flat(["duck 公园 again"]))  # and a second append merges into it
    one_by_one.append_counted(one_by_one.counted(["duck 公园 again"]))
    for terms in QUERIES:
        tokens = [token for term in terms for token in LEXICAL_VIEWS["words"](term, ())]
        assert np.array_equal(flat.term_scores(tokens), one_by_one.term_scores(tokens)), terms
