"""The index's paths: exact surfaces pinned first, BM25 kept by the coverage rule, cosine over chunk
vectors, their RRF, the material filter, tag samples, and an index built from the previous one."""

from __future__ import annotations

import random

import numpy as np
import pytest

from knowledge.search import SearchEntry, build_index
from knowledge.search.index import RRF_K, KnowledgeIndex
from tests.knowledge.search.support import duck, entry, greeting, meme, unit


def index_of(*entries: SearchEntry, version: str = "v", dim: int | None = None) -> KnowledgeIndex:
    return build_index(version, entries, vector_dim=dim)


def titles(index: KnowledgeIndex, query: str, *, material_type: str = "auto", limit: int = 10) -> list[str]:
    hits = index.rank(query, material_type=material_type, limit=limit, query_vector=None)
    return [index.entries[hit.entry].title for hit in hits]


FILLER = [
    entry(f"条目{n}", f"这是第{n}个普通条目，讲的是天气、美食和旅行里的小事情。", pack_id="filler")
    for n in range(20)
]


@pytest.mark.parametrize(
    "query",
    [
        "绝绝子",
        "jjz",
        "JJZ",
        "绝了",
        "绝绝子是什么意思",
        "「绝绝子」",
        "绝绝子是什么意思？",
        "绝绝子 是什么意思",
    ],
)
def test_a_query_naming_an_entry_finds_it_first_by_title_alias_or_recognition(query: str) -> None:
    # A filler entry that mentions the meme many times ranks above it on BM25 alone.
    mentions = "绝绝子 绝了 绝绝子 jjz 绝绝子 绝了 绝绝子是什么意思 绝绝子。"
    noisy = entry("网络用语合集", mentions * 3, pack_id="other")
    index = index_of(noisy, *FILLER, meme())
    hits = index.rank(query, material_type="auto", limit=3, query_vector=None)
    assert index.entries[hits[0].entry].title == "绝绝子"
    assert hits[0].exact == 1


def test_strict_before_loose_so_a_symbol_makes_another_name() -> None:
    c = entry("C", "C is a programming language.", aliases=("C language",))
    cpp = entry("C++", "C++ is a programming language with classes.")
    csharp = entry("C#", "C# is a language on .NET.")
    index = index_of(c, cpp, csharp)
    assert [index.entries[e].title for e in index.exact("c++", index.allowed("auto"))] == ["C++"]
    assert [index.entries[e].title for e in index.exact("C", index.allowed("auto"))] == ["C"]
    assert [index.entries[e].title for e in index.exact("c#", index.allowed("auto"))] == ["C#"]
    # Loose: separators and edge punctuation may differ, but only for names without edge symbols.
    assert [index.entries[e].title for e in index.exact("C-language?", index.allowed("auto"))] == ["C"]
    assert index.exact("c+", index.allowed("auto")) == []


def test_bm25_keeps_a_hit_only_when_the_query_terms_are_mostly_covered_or_the_entry_is_named() -> None:
    index = index_of(meme(), duck(), *FILLER)
    # Shares one bigram (网络) with the meme, far below 60 %.
    assert titles(index, "网络安全漏洞扫描工具推荐") == []
    assert titles(index, "明天的天气预报怎么样") == []
    # Most of its terms are in the meme's text.
    assert titles(index, "夸赞别人的网络流行语") == ["绝绝子"]
    # Few of its words are in the entry, but it names the entry (all of the title's terms).
    assert titles(index, "我昨天听朋友说了绝绝子，这到底是什么梗啊") == ["绝绝子"]
    assert titles(index, "could you tell me more about rubber duck debugging in practice") == [
        "Rubber duck debugging"
    ]
    # English words are case-folded (and stemmed): a reworded question still covers the entry.
    hits = index.rank("EXPLAINING the CODE to a DUCK", material_type="auto", limit=3, query_vector=None)
    assert [index.entries[h.entry].title for h in hits] == ["Rubber duck debugging"]
    assert hits[0].bm25 == 1 and hits[0].exact is None


def test_the_chunk_shown_is_the_one_the_query_matched() -> None:
    long = entry(
        "长条目",
        "\n\n".join(
            [
                "第一部分讲历史。" + "历史上的事情很多。" * 100,
                "第二部分讲美食。" + "火锅和烧烤都很好吃。" * 90,
                "第三部分讲旅行。" + "去海边看日出很美。" * 100,
            ]
        ),
    )
    index = index_of(long, *FILLER)
    (hit,) = index.rank("火锅和烧烤好吃吗", material_type="auto", limit=3, query_vector=None)
    assert "火锅" in index.chunk_texts[hit.entry][hit.chunk]
    assert hit.chunk > 0


def test_cosine_finds_an_entry_by_its_vector_alone_at_or_over_the_threshold() -> None:
    axes = np.eye(4, dtype=np.float32)
    near = entry("Alpha", "first text about nothing in particular", vectors=[axes[0]])
    far = entry("Beta", "second text about something else", vectors=[unit([0.2, 0.0, 1.0, 0.0])])
    index = index_of(near, far, dim=4)
    query = unit([1.0, 0.0, 0.2, 0.0])
    hits = index.rank("zzz unrelated words", material_type="auto", limit=5, query_vector=query)
    assert [index.entries[h.entry].title for h in hits] == ["Alpha"]  # Beta's cosine is 0.38
    assert hits[0].vector == 1 and hits[0].bm25 is None and hits[0].cosine is not None
    assert hits[0].cosine >= 0.5
    # An entry's best chunk counts, and is the one shown.
    three = "\n\n".join(letter * 1000 for letter in "xyz")
    two = entry("Gamma", three, vectors=[axes[2], axes[1], axes[0]])
    index = index_of(two, dim=4)
    (hit,) = index.rank("nothing", material_type="auto", limit=5, query_vector=axes[0])
    assert hit.chunk == 2
    # Vectors of another length (another model) are left out, not compared.
    assert index_of(two, dim=8).has_vectors is False


def test_rrf_orders_the_fused_paths_after_the_exact_matches() -> None:
    rng = np.random.default_rng(7)
    base = unit(rng.normal(size=8))
    entries = []
    for n in range(6):
        vector = unit(base + rng.normal(scale=0.3 + 0.15 * n, size=8))
        entries.append(
            entry(f"Topic {n}", f"ducks and debugging notes number {n} " + "code " * n, vectors=[vector])
        )
    entries.append(entry("ducks debugging", "a title that is the whole query"))
    index = index_of(*entries, dim=8)
    hits = index.rank("ducks debugging", material_type="auto", limit=10, query_vector=base)
    assert index.entries[hits[0].entry].title == "ducks debugging" and hits[0].exact == 1
    fused = hits[1:]
    assert any(h.bm25 and h.vector for h in fused)
    for hit in fused:
        expected = sum(1 / (RRF_K + rank) for rank in (hit.bm25, hit.vector) if rank)
        assert hit.fused == pytest.approx(expected, abs=1e-6)
    assert [h.fused for h in fused] == sorted((h.fused for h in fused), reverse=True)


def test_the_material_filter() -> None:
    index = index_of(meme(), duck(), greeting())
    assert titles(index, "早安问候", material_type="knowledge") == []
    assert titles(index, "早安问候", material_type="corpus") == ["早安问候"]
    assert titles(index, "早安问候", material_type="all") == ["早安问候"]
    assert titles(index, "绝绝子", material_type="corpus") == []
    assert titles(index, "绝绝子", material_type="auto") == ["绝绝子"]


def test_sample_draws_random_entries_carrying_the_tag() -> None:
    index = index_of(meme(), duck(), greeting(), *FILLER)
    rng = random.Random(1)
    drawn = {
        index.entries[h.entry].title
        for _ in range(30)
        for h in index.sample("domain:meme", material_type="auto", limit=1, rng=rng)
    }
    assert drawn == {"绝绝子", "早安问候"}
    both = index.sample("DOMAIN:MEME", material_type="auto", limit=5, rng=rng)
    assert sorted(index.entries[h.entry].title for h in both) == ["早安问候", "绝绝子"]
    only = index.sample("domain:meme", material_type="knowledge", limit=5, rng=rng)
    assert [index.entries[h.entry].title for h in only] == ["绝绝子"]
    assert index.sample("domain:nothing", material_type="auto", limit=5, rng=rng) == []


def test_an_index_built_from_the_previous_one_answers_as_one_built_afresh() -> None:
    first = index_of(meme(), duck(), greeting(), *FILLER, version="v1")
    changed_duck = entry("Rubber duck debugging", "Now about explaining code to a toy duck on the desk.")
    added = entry("新梗", "新的网络流行语条目，用来测试增量构建。", aliases=("xg",))
    later = [meme(), changed_duck, *FILLER[:15], added]  # greeting and five fillers removed
    incremental = build_index("v2", later, previous=first)
    fresh = build_index("v2", later)
    assert incremental.view is not first.view and incremental.view.dead > 0
    queries = ["绝绝子", "toy duck on the desk", "新的网络流行语", "xg", "早安问候", "天气美食", "条目17"]
    for query in queries:
        got = incremental.rank(query, material_type="auto", limit=10, query_vector=None)
        want = fresh.rank(query, material_type="auto", limit=10, query_vector=None)
        assert got == want, query
        # Live rows score as the fresh index's rows do (the recall engine's tombstones count nothing).
        live = incremental.view.term_scores(["网络", "duck"])[incremental.row_entry >= 0]
        assert sorted(live.tolist()) == sorted(fresh.view.term_scores(["网络", "duck"]).tolist())
    assert titles(incremental, "早安问候") == []
    assert titles(incremental, "条目17") == []
    # Nothing changed in the rows: the postings are shared, not copied.
    assert build_index("v3", later, previous=incremental).view is incremental.view


def test_a_build_tokenised_in_a_child_process_answers_as_one_tokenised_here() -> None:
    records = [meme(), duck(), greeting(), *FILLER]
    here = build_index("v1", records)
    child = build_index("v1", records, offload_rows=1)
    later = [*records[:-3], entry("新梗", "新的网络流行语条目。", aliases=("xg",))]
    child_later = build_index("v2", later, previous=child, offload_rows=1)
    here_later = build_index("v2", later, previous=here)
    assert child.view is not here.view and child_later.view.dead == here_later.view.dead == 3
    for query in ["绝绝子", "explaining code to a duck", "早安问候", "天气美食", "新的网络流行语", "xg"]:
        assert child.rank(query, material_type="auto", limit=5) == here.rank(
            query, material_type="auto", limit=5
        )
        assert child_later.rank(query, material_type="auto", limit=5) == here_later.rank(
            query, material_type="auto", limit=5
        )


def test_the_recall_views_term_rows_list_each_live_row_holding_a_term() -> None:
    from recall.engine import LEXICAL_VIEWS, Bm25View

    view = Bm25View(LEXICAL_VIEWS["words"], ["绝绝子真好", "rubber duck", "绝绝子 duck"])
    view.remove(0)
    view.append(["duck 绝绝"])
    terms, rows = view.term_rows(["绝绝", "duck", "absent"])
    assert sorted(zip(terms.tolist(), rows.tolist(), strict=True)) == [(0, 2), (0, 3), (1, 1), (1, 2), (1, 3)]


def test_a_build_paused_between_slices_answers_as_one_built_in_one_go(monkeypatch) -> None:
    monkeypatch.setattr("knowledge.search.index.PAUSE_EVERY_DERIVED", 5)
    monkeypatch.setattr("knowledge.search.view_update.PAUSE_EVERY_ROWS", 2)
    first = index_of(meme(), duck(), *FILLER, version="v1")
    added = [entry(f"新条目{n}", f"第{n}个新的网络流行语条目，用来测试分片构建。") for n in range(12)]
    later = [meme(), duck(), *FILLER, *added]
    pauses: list[int] = []
    sliced = build_index("v2", later, previous=first, pause=lambda: pauses.append(1))
    whole = build_index("v2", later, previous=first)
    # The 12 new entries derived 5 at a time, their rows appended 2 at a time, and the steps between.
    assert len(pauses) >= 12 // 5 + 12 // 2
    for query in ["绝绝子", "新的网络流行语", "新条目7", "天气美食"]:
        assert sliced.rank(query, material_type="auto", limit=10) == whole.rank(
            query, material_type="auto", limit=10
        ), query


def test_each_pass_of_a_build_over_the_entries_pauses_every_few_of_them() -> None:
    # A request of the process that arrives during a background build shares the interpreter lock
    # with it only until the build's next pause: slices of 2 000 entries held it 100–400 ms.
    from knowledge.search.index import PAUSE_EVERY_ENTRIES

    many = [entry(f"条目{n}", f"这是第{n}个条目。", pack_id="filler") for n in range(1_000)]
    first = index_of(*many, version="v1")
    pauses: list[int] = []
    build_index("v2", [*many, meme()], previous=first, pause=lambda: pauses.append(1))
    # Four passes over the 1 001 entries or their rows: text keys, rows wanted, rows placed, names.
    assert PAUSE_EVERY_ENTRIES <= 100
    assert len(pauses) >= 4 * (1_000 // PAUSE_EVERY_ENTRIES)
