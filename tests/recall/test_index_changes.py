"""An index that took changes (appends, edits, deletes, vectors) answers as an index rebuilt from the
same rows: same ranked ids, same BM25 scores bit for bit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from recall.engine import BM25_NEKOMEM, BM25_ONLY, DEFAULT, VECTORS_ONLY, Candidate, RecallIndex, bm25
from recall.engine import vectors as engine_vectors
from recall.times import TimeWindow

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 5, 1, 12, tzinfo=UTC)
POOL = "fact"
WORDS = [
    "主人",
    "喜欢",
    "绿茶",
    "咖啡",
    "猫",
    "狗",
    "公园",
    "散步",
    "钢琴",
    "小提琴",
    "周末",
    "爬山",
    "团子",
    "豆豆",
    "生日",
    "蛋糕",
    "工作",
    "加班",
    "旅行",
    "东京",
    "green",
    "tea",
    "coffee",
    "cat",
    "dog",
    "park",
    "walk",
    "piano",
    "violin",
    "weekend",
    "hiking",
    "birthday",
    "cake",
    "work",
    "travel",
    "tokyo",
    "morning",
    "evening",
    "rain",
    "snow",
    "book",
    "movie",
    "friend",
    "sister",
    "brother",
    "music",
    "dinner",
]


def corpus_text(rng: np.random.Generator, length: int) -> str:
    # A Zipf-like draw: a few words are common (low idf), most are rare, as in real chat text.
    picks = np.minimum(rng.zipf(1.4, size=length) - 1, len(WORDS) - 1)
    return " ".join(WORDS[i] for i in picks)


def row(key: int, text: str, *, tier: str = "fact", vector: np.ndarray | None = None) -> Candidate:
    when = T0 + timedelta(hours=key)
    return Candidate(
        id=f"fact_{key}",
        text=text,
        tier=tier,
        created_at=when,
        event_start_at=when,
        vector=vector,
        pool=POOL,
        key=key,
    )


def unit(rng: np.random.Generator, dim: int = 16) -> np.ndarray:
    v = rng.normal(size=dim).astype(np.float32)
    return v / np.linalg.norm(v)


def changed_and_rebuilt(
    rng: np.random.Generator, size: int
) -> tuple[RecallIndex, RecallIndex, dict[int, Candidate]]:
    rows = {k: row(k, corpus_text(rng, int(rng.integers(3, 30))), vector=unit(rng)) for k in range(size)}
    rows[size] = row(size, rows[0].text, vector=unit(rng))  # an exact duplicate text: a tie to break
    live = dict(rows)
    index = RecallIndex(list(rows.values()), dim=16)
    # Several rounds, as queries between writes would apply them.
    for round_ in range(4):
        keys = sorted(live)
        removed = [int(k) for k in rng.choice(keys, size=size // 20, replace=False)]
        for key in removed:
            del live[key]
        edited = [int(k) for k in rng.choice(sorted(live), size=size // 10, replace=False)]
        upserts = []
        for key in edited:
            tier = "fact_archive" if key % 7 == 0 else "fact"
            live[key] = row(key, corpus_text(rng, int(rng.integers(3, 30))), tier=tier, vector=unit(rng))
            upserts.append(live[key])
        start = max(rows) + 1 + round_ * size
        for key in range(start, start + size // 10):
            live[key] = row(key, corpus_text(rng, int(rng.integers(3, 30))))  # vector comes later
            upserts.append(live[key])
        index.apply(pool=POOL, upserts=upserts, removed=removed)
        # The backfill's vectors for the new rows, alone.
        vectors = {key: unit(rng) for key in range(start, start + size // 10)}
        index.apply(pool=POOL, vectors=vectors)
        for key, vector in vectors.items():
            c = live[key]
            live[key] = row(key, c.text, tier=c.tier, vector=vector)
    rebuilt = RecallIndex([live[k] for k in sorted(live)], dim=16)
    return index, rebuilt, live


QUERIES = [
    "绿茶 咖啡",
    "主人 喜欢 猫",
    "green tea coffee",
    "piano violin weekend",
    "tokyo travel birthday cake",
    "dinner",
    "团子",
    "morning rain book",
]


@pytest.mark.parametrize("tail_postings", [8192, 64, 1], ids=lambda n: f"tail{n}")
@pytest.mark.parametrize("config", [BM25_ONLY, BM25_NEKOMEM], ids=lambda c: c.name)
def test_bm25_after_changes_ranks_like_a_rebuild(config, tail_postings, monkeypatch) -> None:
    # Appended rows' postings sit in the tail, in the merged segment, or both (a tail of 1 merges at
    # every append; 64 leaves some of each).
    monkeypatch.setattr(bm25, "TAIL_POSTINGS", tail_postings)
    index, rebuilt, live = changed_and_rebuilt(np.random.default_rng(3), 400)
    assert len(index) == len(rebuilt) == len(live)
    assert sorted(c.key for c in index.candidates if c.key is not None) == sorted(live)
    for query in QUERIES:
        got = index.search(query, config=config)
        want = rebuilt.search(query, config=config)
        assert [h.candidate.id for h in got] == [h.candidate.id for h in want], query
        assert [h.score for h in got] == [h.score for h in want], query
        assert got, query
    for name in ("original", "words"):
        view, reference = index.views[name], rebuilt.views[name]
        for query in QUERIES:
            scores = {index.order[r]: s for r, s in enumerate(view.scores(query)) if index.alive[r]}
            expected = dict(zip(rebuilt.order.tolist(), reference.scores(query).tolist(), strict=True))
            assert {int(k): float(v) for k, v in scores.items()} == expected  # bit for bit


def test_vectors_filled_after_changes_rank_like_a_rebuild() -> None:
    rng = np.random.default_rng(5)
    index, rebuilt, live = changed_and_rebuilt(rng, 200)
    assert index.matrix is not None and int(index.has_vector.sum()) == int(rebuilt.has_vector.sum())
    for _ in range(10):
        query = unit(rng)
        got = index.search("q", config=VECTORS_ONLY, query_vector=query)
        want = rebuilt.search("q", config=VECTORS_ONLY, query_vector=query)
        assert [h.candidate.id for h in got] == [h.candidate.id for h in want]
        assert all(h.candidate.tier == "fact" for h in got)  # the archive is never in the cosine pool
    hybrid = index.search("绿茶 咖啡", config=DEFAULT, query_vector=unit(rng))
    assert hybrid and all(h.candidate.key in live for h in hybrid)


def test_large_pools_take_vectors_in_their_compact_encoding(monkeypatch) -> None:
    monkeypatch.setattr(engine_vectors, "EXACT_COSINE_ROWS", 50)
    rng = np.random.default_rng(9)
    base = [row(k, f"row {k}", vector=unit(rng)) for k in range(300)]
    index = RecallIndex(base, dim=16)
    assert index.matrix is None and index.q8 is not None
    late = unit(rng)
    index.apply(pool=POOL, upserts=[row(1000, "late row")])
    index.apply(pool=POOL, vectors={1000: late})
    index.apply(pool=POOL, vectors={5: -late})
    hits = index.search("q", config=VECTORS_ONLY, query_vector=late)
    assert hits[0].candidate.id == "fact_1000" and hits[0].paths["cosine"].score == pytest.approx(
        1.0, abs=0.02
    )
    assert "fact_5" not in [h.candidate.id for h in hits]


def test_deleted_and_replaced_rows_leave_every_path() -> None:
    index = RecallIndex([row(1, "主人养了一只橘猫"), row(2, "主人喜欢爬山")], dim=16)
    index.apply(pool=POOL, upserts=[row(1, "主人养了一只柴犬")], removed=[2])
    assert [c.text for c in index.candidates] == ["主人养了一只柴犬"]
    assert index.search("橘猫", config=BM25_ONLY) == []
    assert index.search("爬山", config=BM25_ONLY) == []
    assert [h.candidate.text for h in index.search("柴犬", config=BM25_ONLY)] == ["主人养了一只柴犬"]
    window_all = index.by_time(TimeWindow(start=T0 - timedelta(days=1), end=T0 + timedelta(days=1)))
    assert [h.candidate.key for h in window_all] == [1]
    assert index.changed_rows == 3


def test_an_index_saved_and_loaded_answers_the_same() -> None:
    import pickle

    rng = np.random.default_rng(13)
    index, _, _ = changed_and_rebuilt(rng, 200)
    index.apply(pool=POOL, upserts=[row(5000, "绿茶 咖啡 without a vector yet")])
    loaded = pickle.loads(pickle.dumps(index))
    assert loaded.matrix is not None and index.matrix is not None
    assert np.array_equal(loaded.matrix, index.matrix) and np.array_equal(loaded.has_vector, index.has_vector)
    query = unit(rng)
    for q in QUERIES:
        want = index.search(q, config=DEFAULT, query_vector=query)
        assert [h.candidate.id for h in loaded.search(q, config=DEFAULT, query_vector=query)] == [
            h.candidate.id for h in want
        ]
    loaded.apply(pool=POOL, removed=[5000])  # and it still takes changes
    assert "fact_5000" not in [c.id for c in loaded.candidates]


def test_appending_a_row_does_not_copy_the_vectors_every_time() -> None:
    from recall.engine.vectors import appended

    first = appended(np.ones((4000, 8), np.float32), np.zeros((1, 8), np.float32))
    second = appended(first, np.full((1, 8), 2.0, np.float32))
    assert second.shape == (4002, 8) and second[-1, 0] == 2.0 and first.shape == (4001, 8)
    assert np.shares_memory(first, second)  # written into the spare room, not copied


def test_a_saved_index_loads_with_arrays_that_take_changes(tmp_path) -> None:
    from recall.snapshots import snapshot_read, snapshot_write

    rows = [
        Candidate(
            id=f"f{i}", text=f"主人喜欢第{i}种茶", tier="fact", pool="p", key=i, vector=np.eye(4)[i % 4]
        )
        for i in range(40)
    ]
    index = RecallIndex(rows, dim=4)
    path = tmp_path / "index.snapshot"
    snapshot_write(path, version=7, index=index)
    saved = snapshot_read(path)
    assert saved is not None and saved[0] == 7
    loaded = saved[1]
    assert [h.candidate.id for h in loaded.search("第3种茶")] == [
        h.candidate.id for h in index.search("第3种茶")
    ]
    # Loaded arrays are writable: a delete, a new row and a vector fill all apply.
    loaded.apply(
        pool="p",
        removed=[3],
        upserts=[Candidate(id="n", text="主人喜欢乌龙茶", tier="fact", pool="p", key=99)],
    )
    loaded.apply(pool="p", vectors={99: np.eye(4)[1]})
    assert "f3" not in {h.candidate.id for h in loaded.search("第3种茶")}
    assert loaded.search("乌龙茶")[0].candidate.id == "n" and loaded.has_vector[loaded.row_of("p", 99)]


def test_appended_rows_cost_bytes_not_python_objects() -> None:
    # Each appended Chinese turn brings ~80 terms the delta has not seen. A list per term made ~20 KB a
    # row, so a character's delta grew to ~40 MB before compaction; flat postings are ~13 bytes each.
    import tracemalloc

    from tests.support.dataset import turns

    texts = [t["text"] for t in (*turns("memorybank-cn"), *turns("memorybank-en"))]
    view = bm25.Bm25View(bm25.LEXICAL_VIEWS["words"], texts[:20], [])
    appended = texts[20:420]
    view.counted(appended)  # the term-hash memo (bounded, shared by every view) is filled before
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for text in appended:
            view.append([text])
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(appended) >= 300
    assert grown / len(appended) < 1_500, f"{grown / len(appended):.0f} bytes a row"
    reference = bm25.Bm25View(bm25.LEXICAL_VIEWS["words"], texts[:420], [])
    for query in ("我喜欢", "今天天气", texts[300][:12]):
        assert view.scores(query).tolist() == reference.scores(query).tolist()


def test_a_change_that_fails_to_tokenise_leaves_the_index_as_it_was() -> None:
    # A tokeniser raising halfway through an append left rows without postings or flags, and every later
    # query of the character failed on arrays of different lengths until the next build.
    rng = np.random.default_rng(11)
    rows = [row(k, corpus_text(rng, 12), vector=unit(rng)) for k in range(40)]
    index = RecallIndex(rows, dim=16)
    before = index.search("green tea coffee", config=BM25_NEKOMEM)
    words = index.views["words"]
    tokenize = words.tokenizer

    def fails_on_poison(text: str, names):
        if "poison" in text:
            raise IndexError("string index out of range")
        return tokenize(text, names)

    words.tokenizer = fails_on_poison
    fine, poisoned = row(100, "green tea with the master"), row(101, "a poison word")
    with pytest.raises(IndexError):
        index.apply(pool=POOL, upserts=[fine, poisoned])
    words.tokenizer = tokenize
    assert len(index) == len(rows)
    after = index.search("green tea coffee", config=BM25_NEKOMEM)
    assert [(h.candidate.id, h.score) for h in after] == [(h.candidate.id, h.score) for h in before]
    index.apply(pool=POOL, upserts=[fine])  # and it takes the next change
    assert index.search("master", config=BM25_NEKOMEM)[0].candidate.id == "fact_100"
