"""The pure recall engine: BM25 scores, fusion, time routing, hard filter (no database)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from nekomem.language.tokens import recall_tokens, search_tokens
from recall import engine
from recall.engine import (
    BM25_ONLY,
    DEFAULT,
    ORIGINAL,
    Bm25View,
    Candidate,
    RecallIndex,
    rrf_fuse,
    score_fuse,
)
from recall.engine import vectors as engine_vectors
from recall.times import TimeWindow

# Pure tests, but the session's startup fixture needs the test database to exist when run alone.
pytestmark = pytest.mark.django_db

T0 = datetime(2026, 5, 1, 12, tzinfo=UTC)


def cand(i: int, text: str, *, tier: str = "fact", days: int = 0, vector=None) -> Candidate:
    when = T0 + timedelta(days=days)
    return Candidate(id=f"f{i}", text=text, tier=tier, created_at=when, event_start_at=when, vector=vector)


def bm25_reference_score(query: Sequence[str], doc: Sequence[str], corpus: Sequence[Sequence[str]]) -> float:
    """The original's formula written out: Σ idf·tf(k1+1)/(tf + k1(1−b+b·dl/avgdl))."""
    n_docs = len(corpus)
    avgdl = sum(len(d) for d in corpus) / n_docs
    total = 0.0
    for term in dict.fromkeys(query):
        n = sum(1 for d in corpus if term in d)
        tf = list(doc).count(term)
        if not tf:
            continue
        idf = math.log((n_docs - n + 0.5) / (n + 0.5) + 1)
        total += (
            idf
            * tf
            * (engine.BM25_K1 + 1)
            / (tf + engine.BM25_K1 * (1 - engine.BM25_B + engine.BM25_B * len(doc) / avgdl))
        )
    return total


def test_original_tokenizer_by_hand() -> None:
    assert recall_tokens("我喜欢猫") == ["我喜", "喜欢", "欢猫", "我喜欢", "喜欢猫"]
    assert recall_tokens("Hello World, a") == ["Hello", "World"]  # no lower-casing, 1-char runs dropped
    assert search_tokens("Running dogs") == ["run", "dog"]


def test_bm25_one_document_by_hand() -> None:
    # N=1, n=1: idf = ln(0.5/1.5 + 1) = ln(4/3); tf=1, dl=avgdl → tf·2.5/(1+1.5) = 1 per matching term.
    view = Bm25View(engine.LEXICAL_VIEWS["original"], ["apple banana"], [])
    assert view.scores("apple")[0] == pytest.approx(math.log(4 / 3), rel=1e-5)
    assert view.scores("apple banana apple")[0] == pytest.approx(2 * math.log(4 / 3), rel=1e-5)
    assert view.scores("cherry")[0] == 0


def test_bm25_matches_the_written_out_formula() -> None:
    docs = [
        "我喜欢吃苹果",
        "主人今天去了公园散步",
        "苹果和香蕉都是水果 苹果",
        "Alice likes green tea",
        "green tea",
    ]
    view = Bm25View(engine.LEXICAL_VIEWS["original"], docs, [])
    corpus = [recall_tokens(d) for d in docs]
    for query in ("苹果", "喜欢苹果", "green tea", "公园散步"):
        got = view.scores(query)
        want = [bm25_reference_score(recall_tokens(query), doc, corpus) for doc in corpus]
        assert got == pytest.approx(want, rel=1e-4, abs=1e-6)


def test_bm25_ranking_agrees_with_rank_bm25_for_single_terms() -> None:
    # rank-bm25's Okapi IDF differs from Lucene's, but for one query term the IDF is a constant factor,
    # so both must order the documents the same way (tf and length normalisation are shared).
    docs = ["tea tea tea", "tea and cake and more", "coffee", "tea", "tea with milk tea"]
    corpus = [search_tokens(d) for d in docs]
    ours = Bm25View(engine.LEXICAL_VIEWS["words"], docs, []).scores("tea")
    theirs = BM25Okapi(corpus, k1=1.5, b=0.75).get_scores(["tea"])
    assert list(np.argsort(-ours, kind="stable")) == list(np.argsort(-theirs, kind="stable"))


def test_rrf_by_hand() -> None:
    fused = dict(rrf_fuse({"a": [1, 2], "b": [2, 3]}, k=60))
    assert fused[2] == pytest.approx(1 / 62 + 1 / 61)
    assert fused[1] == pytest.approx(1 / 61)
    assert fused[3] == pytest.approx(1 / 62)
    assert next(row for row, _ in rrf_fuse({"a": [1, 2], "b": [2, 3]})) == 2
    weighted = dict(rrf_fuse({"a": [1], "b": [2]}, k=10, weights={"a": 2.0}))
    assert weighted[1] == pytest.approx(2 / 11) and weighted[2] == pytest.approx(1 / 11)


def test_score_fusion_keeps_the_lower_path_signal() -> None:
    scores = {"a": np.array([4.0, 2.0, 0.0]), "b": np.array([0.5, 0.9, 0.3])}
    fused = dict(score_fuse({"a": [0, 1], "b": [1, 0]}, scores, floors={"a": 0.0, "b": 0.3}))
    assert fused[0] == pytest.approx(1.0 + (0.5 - 0.3) / 0.6)
    assert fused[1] == pytest.approx(0.5 + 1.0)


def test_original_config_caps_each_path_at_four_and_total_at_eight() -> None:
    # "苹果" in a quarter of the pool, so its IDF clears the 0.1 threshold.
    rows = [
        cand(i, f"苹果 item{i}" if i % 4 == 0 else f"香蕉 item{i}", vector=np.eye(4)[i % 4])
        for i in range(40)
    ]
    index = RecallIndex(rows)
    hits = index.search("苹果", config=ORIGINAL, query_vector=np.eye(4)[0])
    bm25 = [h for h in hits if "bm25:original" in h.paths]
    cosine = [h for h in hits if "cosine" in h.paths]
    assert len(bm25) == 4 and len(cosine) == 4 and len(hits) <= 8
    assert len(index.search("苹果", config=DEFAULT, query_vector=np.eye(4)[0])) == 8


def test_hard_filter_and_pools() -> None:
    rows = [
        cand(1, "   "),
        cand(2, "the archived apple", tier="fact_archive", vector=np.array([1.0, 0.0])),
        cand(3, "an apple", vector=np.array([1.0, 0.0])),
        cand(4, "persona apple", tier="persona", vector=np.array([1.0, 0.0])),
    ]
    index = RecallIndex(rows)
    assert [c.id for c in index.candidates] == ["f2", "f3"]  # empty text and persona never indexed
    hits = index.search("apple", query_vector=np.array([1.0, 0.0]), config=DEFAULT)
    by_id = {h.candidate.id: h for h in hits}
    assert "cosine" not in by_id["f2"].paths  # the archive is BM25 only
    assert "cosine" in by_id["f3"].paths
    assert index.search("   ") == []


def test_time_window_filter_then_rank_and_nearest_in_time() -> None:
    rows = [cand(i, f"walk in the park day{i}", days=i) for i in range(10)]
    rows += [cand(10 + i, f"green tea number{i}", days=i - 30) for i in range(10)]
    index = RecallIndex(rows)
    window = TimeWindow(T0 + timedelta(days=3), T0 + timedelta(days=5))
    hits = index.search("park", window=window, config=BM25_ONLY)
    assert {h.candidate.id for h in hits} == {"f3", "f4"}
    nearest = index.by_time(TimeWindow(T0 + timedelta(days=20), T0 + timedelta(days=21)), limit=3)
    assert [h.candidate.id for h in nearest] == ["f9", "f8", "f7"]
    inside = index.by_time(window)
    assert [h.candidate.id for h in inside][:2] == ["f4", "f3"]  # inside first, newest start first
    assert all(h.score is None for h in inside)


def test_event_span_fallbacks() -> None:
    only_end = Candidate(id="x", text="t", tier="fact", event_end_at=T0)
    assert only_end.event_span() == (T0, T0)
    created = Candidate(id="y", text="t", tier="fact", created_at=T0)
    assert created.event_span() == (T0, T0)
    assert Candidate(id="z", text="t", tier="fact").event_span() is None
    index = RecallIndex([Candidate(id="z", text="undated", tier="fact")])
    assert index.by_time(TimeWindow(T0, T0 + timedelta(days=1))) == []


def test_vectors_off_is_bm25_only() -> None:
    index = RecallIndex([cand(1, "green tea"), cand(2, "black coffee")])
    hits = index.search("tea", config=DEFAULT, query_vector=None)
    assert [h.candidate.id for h in hits] == ["f1"]
    # Both lexical views (the feedback terms are off by default since issue 50); no cosine path.
    assert set(hits[0].paths) == {"bm25:words", "bm25:original"}


def test_large_pools_use_coarse_then_exact_cosine(monkeypatch) -> None:
    monkeypatch.setattr(engine_vectors, "EXACT_COSINE_ROWS", 100)
    rng = np.random.default_rng(7)
    # Vectors with structure (a few shared directions), as sentence embeddings have.
    basis = rng.normal(size=(16, 64))
    vectors = rng.normal(size=(3000, 16)) @ basis + 0.3 * rng.normal(size=(3000, 64))
    rows = [cand(i, f"row{i}", vector=v.astype(np.float32)) for i, v in enumerate(vectors)]
    big = RecallIndex(rows)
    assert big.matrix is None and big.coarse is not None
    monkeypatch.setattr(engine_vectors, "EXACT_COSINE_ROWS", 10_000)
    exact = RecallIndex(rows)
    assert exact.matrix is not None
    vector_only = engine.VECTORS_ONLY
    for i in range(0, 3000, 150):
        query = vectors[i] + 0.1 * rng.normal(size=64)
        got = [h.candidate.id for h in big.search("q", config=vector_only, query_vector=query)]
        want = [h.candidate.id for h in exact.search("q", config=vector_only, query_vector=query)]
        assert got[0] == want[0] == f"f{i}"
        assert len(set(got) & set(want)) >= 7


def test_bm25_scores_equal_bm25s_on_the_original_scale() -> None:
    # bm25s (Lucene) is the reference implementation; it leaves out the (k1 + 1) factor we keep.
    import bm25s

    docs = ["我喜欢吃苹果", "苹果和香蕉都是水果 苹果", "Alice likes green tea", "green tea", "", "tea cake"]
    tokenize = engine.LEXICAL_VIEWS["original"]
    corpus = [tokenize(d, ()) for d in docs]
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in doc] for doc in corpus]
    reference = bm25s.BM25(k1=engine.BM25_K1, b=engine.BM25_B, method="lucene")
    reference.index((ids, {**vocab, "": len(vocab)}), show_progress=False)
    view = Bm25View(tokenize, docs, [])
    for query in ("苹果", "green tea", "tea cake 香蕉", "nothing"):
        wanted = [vocab[t] for t in dict.fromkeys(tokenize(query, ())) if t in vocab]
        want = reference.get_scores(wanted) * (engine.BM25_K1 + 1) if wanted else np.zeros(len(docs))
        assert view.scores(query) == pytest.approx(want, rel=1e-5, abs=1e-7)


def test_the_compact_store_gives_back_every_field() -> None:
    aware = datetime(2026, 5, 1, 20, 30, 15, 123456, tzinfo=timezone(timedelta(hours=8)))
    naive = datetime(2026, 5, 2, 9, 0)
    rows = [
        Candidate(id="a", text="主人喜欢喝绿茶 🍵", tier="fact", entity="master", created_at=aware),
        Candidate(
            id="b" * 40,
            text="lone \ud800 surrogate",
            tier="fact_archive",
            entity="neko",
            created_at=T0,
            event_start_at=naive,
            event_end_at=None,
            subject_kind="user",
            subject_id="u1",
            scope="group",
            evidence_score=1.5,
        ),
    ]
    rows += [cand(i, f"row {i} " + "长" * (i % 50)) for i in range(100)]  # several compressed blocks
    index = RecallIndex(iter(rows))  # a generator is enough: the index is built in one pass
    assert index.candidates == rows
    created = index.candidates[0].created_at
    assert created is not None and created.utcoffset() == timedelta(0)  # same instant, read back in UTC


def test_a_pool_whose_first_rows_have_no_vector_still_gets_vectors() -> None:
    rows = [cand(1, "green tea"), cand(2, "black coffee", vector=np.array([0.0, 2.0])), cand(3, "tea")]
    index = RecallIndex(rows)
    assert index.dim == 2 and index.has_vector.tolist() == [False, True, False]
    hits = index.search("coffee", config=engine.VECTORS_ONLY, query_vector=np.array([0.0, 1.0]))
    assert [h.candidate.id for h in hits] == ["f2"] and hits[0].paths["cosine"].score == pytest.approx(1.0)


def test_large_pool_compact_vectors_score_like_exact_cosine(monkeypatch) -> None:
    monkeypatch.setattr(engine_vectors, "EXACT_COSINE_ROWS", 100)
    rng = np.random.default_rng(11)
    basis = rng.normal(size=(24, 128))
    vectors = (rng.normal(size=(2000, 24)) @ basis + 0.5 * rng.normal(size=(2000, 128))).astype(np.float32)
    index = RecallIndex([cand(i, f"row{i}", vector=v) for i, v in enumerate(vectors)])
    assert index.matrix is None and index.q8 is not None and index.q8.dtype == np.int8
    assert index.coarse is not None and index.coarse.dtype == np.float32  # one product a query
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    for i in range(0, 2000, 97):
        query = unit[i] + 0.2 * rng.normal(size=128).astype(np.float32)
        query /= np.linalg.norm(query)
        exact = unit @ query
        got, _rows = index._cosine(query, np.ones(2000, dtype=bool), [])
        rescored = np.flatnonzero(got > -1)
        assert np.abs(got[rescored] - exact[rescored]).max() < 0.01  # int8 rows: error ≈ 1e-3
        top = np.argsort(-exact)[:20]
        assert len(set(top) & set(rescored)) == 20  # the coarse pass keeps every true top-20 row


def test_a_pool_built_before_its_vectors_moves_to_the_large_encoding_as_they_arrive(monkeypatch) -> None:
    # An import: every row indexed with no vector (float32 zeros), then the backfill's vectors arrive.
    monkeypatch.setattr(engine_vectors, "EXACT_COSINE_ROWS", 100)
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(300, 32)).astype(np.float32)
    rows = [Candidate(id=f"f{i}", text=f"row{i}", tier="fact", pool="p", key=i) for i in range(300)]
    index = RecallIndex(rows, dim=32)
    assert index.matrix is not None and not index.has_vector.any()
    index.apply(pool="p", vectors={i: vectors[i] for i in range(50)})
    assert index.matrix is not None  # still few vectors: exact cosine
    index.apply(pool="p", vectors={i: vectors[i] for i in range(50, 300)})
    assert index.matrix is None and index.q8 is not None and index.has_vector.all()
    query = vectors[123] / np.linalg.norm(vectors[123])
    hits = index.search("zzz", config=engine.VECTORS_ONLY, query_vector=query)
    assert hits[0].candidate.id == "f123" and hits[0].paths["cosine"].score == pytest.approx(1.0, abs=0.01)
    # Rows appended afterwards fill the spare room of the new encoding and are found too.
    index.apply(
        pool="p",
        upserts=[Candidate(id="new", text="new row", tier="fact", pool="p", key=999, vector=-vectors[7])],
    )
    hits = index.search(
        "zzz", config=engine.VECTORS_ONLY, query_vector=-vectors[7] / np.linalg.norm(vectors[7])
    )
    assert hits[0].candidate.id == "new"


def test_the_bytes_an_index_reports_include_its_spare_rows_and_a_small_one_keeps_few() -> None:
    """The recall cache's 2 GiB cap is counted in ``nbytes``: a matrix with room for appends holds its
    spare rows too, and a small character's (2 000 rows) were 1 024 spare rows, half its matrix."""
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((2000, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index = RecallIndex([cand(i, f"row {i}", vector=vectors[i]) for i in range(2000)], dim=64)
    assert index.matrix is not None and index.matrix.shape == (2000, 64)
    assert isinstance(index.matrix.base, np.ndarray)
    spare = index.matrix.base.nbytes - index.matrix.nbytes
    assert 0 < spare <= 128 * 64 * 4
    assert index.nbytes == _rows_bytes(index) + spare

    added = [
        Candidate(id=f"n{i}", text=f"new {i}", tier="fact", vector=vectors[i], pool="facts", key=5000 + i)
        for i in range(200)
    ]
    index.apply(pool="facts", upserts=added)  # past the room: a bigger buffer, counted whole again
    assert index.matrix.shape == (2200, 64)
    assert isinstance(index.matrix.base, np.ndarray)
    grown = index.matrix.base.nbytes - index.matrix.nbytes
    assert grown > 0 and index.nbytes == _rows_bytes(index) + grown


def _rows_bytes(index: RecallIndex) -> int:
    """What the index's arrays take for their rows alone (no spare room)."""
    arrays = (index.matrix, index.coarse, index.projection, index.q8, index.q8_scale, index.has_vector)
    total = sum(a.nbytes for a in arrays if a is not None)
    total += index.span_start.nbytes + index.span_end.nbytes + index.cosine_pool.nbytes + index.order.nbytes
    return total + sum(v.nbytes for v in index.views.values()) + index.rows.strings.nbytes


def test_blanking_rows_of_several_blocks_at_once_keeps_every_other_row() -> None:
    """A catch-up blanks its tombstoned rows together, one rewrite per block: sealed blocks and the
    pending one, several rows of a block, and the rows around them read back unchanged."""
    from recall.engine.columns import StringColumn

    column = StringColumn(2)
    total = StringColumn.BLOCK * 2 + 5  # two sealed blocks and a pending one
    for i in range(total):
        column.append(f"id{i}", f"第{i}行的文字 row {i}")
    column.freeze(trim=False)
    column.append("late", "追加的一行")  # reopens the partial block, as an append after a catch-up does
    blanked = {0, 3, StringColumn.BLOCK - 1, StringColumn.BLOCK + 7, total - 2, total}
    column.blank(sorted(blanked, reverse=True))
    column.freeze(trim=False)
    for i in range(total):
        assert column[i] == (("", "") if i in blanked else (f"id{i}", f"第{i}行的文字 row {i}"))
    assert column[total] == ("", "")
    assert list(column.column(1))[1] == "第1行的文字 row 1"
