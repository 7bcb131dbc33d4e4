"""The lookup: its answer, the query vector within the budget (from a model that is already loaded,
never loading one), one index per entries version, and the results it can give."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from knowledge.search import (
    SearchChunk,
    SearchEntry,
    chunk_embed_text,
    knowledge_index_refresh,
    knowledge_index_settle,
    knowledge_index_version,
    knowledge_lookup,
)
from knowledge.search.lookup import LookupOutcome
from nekomem import embeddings
from nekomem.embeddings.fetch import profile_is_present
from nekomem.embeddings.profiles import MUSE_V3_INT8
from tests.knowledge.search.support import duck, entry, greeting, meme

MODEL_DIR = Path(django_settings.EMBEDDING_MODEL_DIR)
ENTRIES = [meme(), duck(), greeting()]


@pytest.fixture(autouse=True)
def fresh_state(settings) -> Iterator[None]:
    settings.EMBEDDINGS_ENABLED = True
    settings.EMBEDDING_MODEL_DIR = MODEL_DIR
    settings.EMBEDDING_PROFILE = ""
    embeddings.reset_for_tests()
    yield
    embeddings.reset_for_tests()


def lookup(
    query: str,
    *,
    version: str = "v1",
    entries: Callable[[], list[SearchEntry]] = lambda: ENTRIES,
    mode: str = "lookup",
    material_type: str = "auto",
    limit: int = 3,
    budget_ms: int = 1500,
    language: str = "zh",
) -> LookupOutcome:
    return knowledge_lookup(
        entries_version=version,
        load_entries=entries,
        query=query,
        mode=mode,
        material_type=material_type,
        limit=limit,
        budget_ms=budget_ms,
        language=language,
    )


def test_a_match_answers_the_block_hits_card_ids_and_ranks() -> None:
    outcome = lookup("jjz")
    assert outcome.result == "matched"
    assert outcome.context.startswith("======以下为本地公共知识参考======\n")
    assert "- [绝绝子] (知识)" in outcome.context
    assert outcome.hits == [{"pack_id": "demo-memes", "title": "绝绝子", "material_type": "knowledge"}]
    assert outcome.card_ids == ["demo-memes/绝绝子"]
    assert outcome.ranks[0]["card_id"] == "demo-memes/绝绝子" and outcome.ranks[0]["exact"] == 1
    assert set(outcome.payload()) == {"result", "context", "hits", "card_ids", "retrieval_mode", "elapsed_ms"}
    assert outcome.elapsed_ms >= 0


def test_a_miss_has_no_context() -> None:
    outcome = lookup("明天的天气预报怎么样")
    assert (outcome.result, outcome.context, outcome.hits, outcome.card_ids) == ("miss", "", [], [])
    assert lookup("   ").result == "miss"


def test_a_corpus_hit_reads_as_an_example_and_the_limit_holds() -> None:
    outcome = lookup("早安问候", material_type="corpus", language="en")
    assert "- [早安问候] (example)" in outcome.context
    sample = lookup("domain:meme", mode="sample", limit=1, language="en")
    assert sample.result == "matched" and sample.retrieval_mode == "sample" and len(sample.hits) == 1
    assert lookup("domain:none", mode="sample").result == "miss"


def test_without_a_loaded_model_the_lookup_is_bm25_and_loads_none() -> None:
    outcome = lookup("jjz")
    assert (outcome.result, outcome.retrieval_mode) == ("matched", "bm25")
    assert embeddings.status()["state"] == "init"  # the request did not start a load


def test_the_index_is_built_once_per_version_and_again_in_the_background_when_it_changes() -> None:
    reads: list[str] = []

    def entries_v1() -> list[SearchEntry]:
        reads.append("v1")
        return ENTRIES

    def entries_v2() -> list[SearchEntry]:
        reads.append("v2")
        return [duck(), entry("新梗", "一个新的网络流行语。", aliases=("xg",))]

    assert lookup("jjz", entries=entries_v1).result == "matched"
    assert lookup("xg", entries=entries_v1).result == "miss"
    assert reads == ["v1"]
    lookup("jjz", version="v2", entries=entries_v2)  # answered at once; v2 is built behind it
    assert knowledge_index_settle(10)
    assert knowledge_index_version() == "v2"
    assert lookup("jjz", version="v2", entries=entries_v2).result == "miss"  # removed in v2
    assert lookup("xg", version="v2", entries=entries_v2).card_ids == ["demo-memes/新梗"]
    assert reads == ["v1", "v2"]


def test_a_newer_version_never_makes_a_lookup_wait_the_current_index_answers_meanwhile() -> None:
    knowledge_index_refresh(entries_version="1#0", load_entries=lambda: [meme()])
    gate = threading.Event()
    newer = [meme(), duck()]

    def slow() -> list[SearchEntry]:
        gate.wait(10)
        return newer

    # The read of the new version is held up: the lookup does not wait for it, the old index answers.
    for version in ("2#0", "2#1"):
        outcome = lookup("rubber ducking", version=version, entries=slow, budget_ms=5_000)
        assert outcome.result == "miss" and outcome.elapsed_ms < 1_000
    assert knowledge_index_version() == "1#0"
    gate.set()
    assert knowledge_index_settle(10)
    assert knowledge_index_version() == "2#1"  # the newest wish, however many lookups asked
    assert lookup("rubber ducking", version="2#1", entries=slow).result == "matched"


def test_a_write_builds_its_change_before_it_answers_and_an_older_version_changes_nothing() -> None:
    assert lookup("jjz", version="1#0", entries=lambda: [meme()]).result == "matched"
    knowledge_index_refresh(entries_version="2#0", load_entries=lambda: [duck()], serving_only=True)
    assert lookup("jjz", version="2#0", entries=lambda: [duck()]).result == "miss"
    reads: list[int] = []

    def counted() -> list[SearchEntry]:
        reads.append(1)
        return [meme()]

    # A lookup that read the version before the write committed asks for nothing older.
    assert lookup("jjz", version="1#0", entries=counted).result == "miss"
    assert knowledge_index_settle(10) and reads == [] and knowledge_index_version() == "2#0"


def test_a_process_that_answers_no_lookups_builds_no_index_on_a_write() -> None:
    knowledge_index_refresh(entries_version="1#0", load_entries=lambda: [meme()], serving_only=True)
    assert knowledge_index_version() is None


def test_concurrent_lookups_of_a_new_version_share_one_build() -> None:
    reads: list[int] = []
    gate = threading.Event()

    def slow_entries() -> list[SearchEntry]:
        reads.append(1)
        gate.wait(5)
        return ENTRIES

    outcomes: list[LookupOutcome] = []
    threads = [
        threading.Thread(target=lambda: outcomes.append(lookup("jjz", entries=slow_entries, budget_ms=5000)))
        for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    gate.set()
    for thread in threads:
        thread.join(10)
    assert [o.result for o in outcomes] == ["matched"] * 4
    assert reads == [1]


def test_a_build_longer_than_the_budget_answers_timeout_and_serves_the_next_lookup() -> None:
    many = [
        entry(f"条目{n}", f"第{n}个条目的正文，讲天气、美食、旅行和城市里的许多小事。" * 20, pack_id="big")
        for n in range(400)
    ]
    outcome = lookup("条目7", version="big", entries=lambda: [*many, meme()], budget_ms=0)
    assert outcome.result == "timeout" and outcome.context == ""
    # The build went on: the next lookup of that version, with time to wait, is answered.
    assert lookup("jjz", version="big", entries=lambda: [], budget_ms=30_000).result == "matched"


def test_a_failing_read_answers_error() -> None:
    def broken() -> list[SearchEntry]:
        raise RuntimeError("store gone")

    assert lookup("jjz", version="broken", entries=broken).result == "error"
    # The failure is not kept: the version is read again next time.
    assert lookup("jjz", version="broken").result == "matched"


needs_model = pytest.mark.skipif(
    not profile_is_present(MODEL_DIR, MUSE_V3_INT8) and not os.environ.get("NEKOMEM_REQUIRE_MODELS"),
    reason="muse-v3-int8 not fetched",
)


def with_vectors(records: list[SearchEntry]) -> list[SearchEntry]:
    embedder = embeddings.get_embedder()
    assert embedder is not None
    out = []
    for record in records:
        texts = [
            chunk_embed_text(title=record.title, summary=record.summary, chunk=c.text, first=c.ordinal == 0)
            for c in record.chunks
        ]
        vectors = embedder.embed(texts)
        chunks = tuple(
            SearchChunk(chunk_id=c.chunk_id, ordinal=c.ordinal, text=c.text, vector=v.tobytes())
            for c, v in zip(record.chunks, vectors, strict=True)
        )
        out.append(SearchEntry(**{**{f: getattr(record, f) for f in record.__slots__}, "chunks": chunks}))
    return out


@needs_model
def test_with_the_model_loaded_the_lookup_is_hybrid_and_finds_by_meaning() -> None:
    assert embeddings.warm_up()
    records = with_vectors(ENTRIES)
    knowledge_index_refresh(entries_version="vec", load_entries=lambda: records)
    # Not one word in common with the English entry: only its vector can find it.
    outcome = lookup("对着小黄鸭解释代码来找bug", version="vec", entries=lambda: records, budget_ms=5000)
    assert outcome.retrieval_mode == "hybrid"
    assert outcome.card_ids[:1] == ["demo-memes/rubber duck debugging"]
    rank = outcome.ranks[0]
    assert rank["vector"] == 1 and rank["bm25"] is None and rank["exact"] is None


@needs_model
def test_a_query_vector_later_than_the_budget_leaves_a_bm25_answer() -> None:
    assert embeddings.warm_up()
    records = with_vectors(ENTRIES)
    knowledge_index_refresh(entries_version="vec", load_entries=lambda: records)
    # A long query takes the model ~100 ms; the budget is spent before it is there.
    query = "绝绝子" + "，这个网络流行语到底是什么意思呢" * 90
    late = lookup(query, version="vec", entries=lambda: records, budget_ms=1)
    assert (late.result, late.retrieval_mode) == ("matched", "bm25")
    assert late.card_ids == ["demo-memes/绝绝子"]
    assert late.ranks[0]["vector"] is None
    # Given the time, the same lookup is hybrid.
    on_time = lookup(query, version="vec", entries=lambda: records, budget_ms=5000)
    assert on_time.retrieval_mode == "hybrid"
