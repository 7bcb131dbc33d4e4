"""The background reranker on plain records: vectors, LLM re-rank, and each degradation."""

from __future__ import annotations

import numpy as np
import pytest
from django.test import override_settings

from nekomem.embeddings import get_embedder
from reflections.reranking import RerankRecord, llm_rank_chat, rerank
from tests.recall.support import require_muse
from tests.support.llm_server import ScriptedLLMServer, error, json_content


def records() -> list[RerankRecord]:
    embedder = get_embedder()
    assert embedder is not None
    texts = ["主人喜欢喝绿茶", "主人养了一只猫", "主人在学钢琴", "主人讨厌下雨天", "主人周末去爬山"]
    vectors = embedder.embed(texts)
    rows = [
        RerankRecord(id=f"r{i}", text=t, evidence_score=float(i), vector=v)
        for i, (t, v) in enumerate(zip(texts, vectors, strict=True))
    ]
    rows.append(RerankRecord(id="neg", text="负分条目 绿茶", evidence_score=-1.0, vector=vectors[0]))
    rows.append(RerankRecord(id="sup", text="被抑制 绿茶", suppressed=True, vector=vectors[0]))
    rows.append(RerankRecord(id="dead", text="已否定 绿茶", status="denied", vector=vectors[0]))
    rows.append(RerankRecord(id="novec", text="没有向量的条目", evidence_score=9.0))
    return rows


@pytest.fixture
def muse() -> None:
    require_muse()


def test_coarse_rank_by_cosine_with_hard_filter(muse) -> None:
    ranked = rerank(queries=["主人爱喝什么茶"], records=records(), budget=2)
    assert ranked[0].id == "r0"
    assert len(ranked) == 2
    everything = rerank(queries=["茶"], records=records(), budget=10)
    ids = [r.id for r in everything]
    assert not {"neg", "sup", "dead"} & set(ids)
    assert ids[-1] == "novec"  # rows without vectors follow the embedded ones


def test_no_vectors_degrades_per_caller(muse) -> None:
    rows = records()
    with override_settings(EMBEDDINGS_ENABLED=False):
        stage2 = rerank(queries=["茶"], records=rows, budget=3, on_no_vectors="evidence")
        anchors = rerank(queries=["茶"], records=rows, budget=3, on_no_vectors="empty")
    assert [r.id for r in stage2] == ["novec", "r4", "r3"]  # evidence order
    assert anchors == []


def test_llm_rerank_and_its_failure(muse, llm_server: ScriptedLLMServer) -> None:
    rows = records()
    llm_server.script(json_content({"ranked": [2, 0]}))
    chosen = rerank(queries=["茶"], records=rows, budget=1, llm=llm_rank_chat)
    coarse = rerank(queries=["茶"], records=rows, budget=3)
    assert chosen == [coarse[2]]
    prompt = llm_server.requests[0].json["messages"][0]["content"]
    assert "evidence" in prompt
    llm_server.script(error(500), error(500), error(500))
    llm_server.allow_unexpected = True
    fallback = rerank(queries=["茶"], records=rows, budget=1, llm=llm_rank_chat)
    assert fallback == coarse[:1]


def test_llm_is_skipped_when_the_pool_fits_the_budget(muse) -> None:
    def never(*_: object) -> list[int]:
        raise AssertionError("the LLM must not be asked")

    rows = [r for r in records() if r.id in {"r0", "r1"}]
    assert [r.id for r in rerank(queries=["茶"], records=rows, budget=2, llm=never)] == ["r0", "r1"]
    assert isinstance(rows[0].vector, np.ndarray)
