"""The process's index takes a change of the store pack by pack (only the changed packs are read) and
answers every query exactly as an index built afresh from the whole store: same hits in the same order,
the same BM25 and cosine scores, over random sequences of imports, re-imports, removals, disabled
entries, type overrides, embedding switches and vector fills."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from knowledge import search_selectors, selectors, services
from knowledge.models import KnowledgeChunk
from knowledge.search import build_index, knowledge_index_settle
from knowledge.search.index import KnowledgeIndex, query_terms
from knowledge.search.index_cache import knowledge_index_entries_read, knowledge_index_for
from nekomem import embeddings
from tests.knowledge.factories import pack_bytes

pytestmark = pytest.mark.django_db(transaction=True)

WORDS = [
    "duck",
    "rubber",
    "debugging",
    "meme",
    "weather",
    "coffee",
    "music",
    "video",
    "prank",
    "garden",
    "猫咪",
    "绿茶",
    "公园",
    "散步",
    "钢琴",
    "网络",
    "流行语",
    "早安",
]
PACKS = ("alpha.test", "beta.test", "gamma.test")
QUERIES = [
    "duck",
    "rubber duck debugging",
    "coffee music",
    "猫咪",
    "绿茶 公园 散步",
    "网络流行语",
    "prank video meme",
    "Note 3",
    "garden weather 早安",
]


def random_pack(rng: random.Random, pack_id: str, previous: dict[str, Any] | None) -> dict[str, Any]:
    """A new version of ``pack_id``: most of the previous version's entries as they were, some changed,
    some gone, some new."""
    entries: list[dict[str, Any]] = []
    for old in (previous or {}).get("entries", []):
        roll = rng.random()
        if roll < 0.15:
            continue
        if roll < 0.35:
            old = {**old, "content": " ".join(rng.choices(WORDS, k=rng.randint(3, 12)))}
        entries.append(old)
    taken = {entry["title"] for entry in entries}
    while len(entries) < rng.randint(3, 7):
        title = f"Note {rng.randint(0, 40)}"
        if title in taken:
            continue
        taken.add(title)
        entries.append(
            {
                "title": title,
                "content": " ".join(rng.choices(WORDS, k=rng.randint(3, 12))),
                "summary": " ".join(rng.choices(WORDS, k=2)) if rng.random() < 0.5 else "",
                "terms": {"alias": [rng.choice(WORDS)] if rng.random() < 0.3 else [], "recognition": []},
                "tags": ["domain:test"],
            }
        )
    return {
        "schema_version": 1,
        "pack_id": pack_id,
        "material_type": rng.choice(["knowledge", "corpus"]),
        "source": {"name": f"Source {rng.randint(0, 9)}", "homepage": "", "license": "MIT"},
        "entries": entries,
    }


def served_index() -> KnowledgeIndex:
    """The index this process answers from once it has taken the store's current version."""
    version = selectors.knowledge_store_version()
    knowledge_index_for(version, search_selectors.knowledge_search_source, timeout=30)
    assert knowledge_index_settle(30)
    index = knowledge_index_for(version, search_selectors.knowledge_search_source, timeout=30)
    assert index is not None and index.version == version
    return index


def bm25_by_entry(index: KnowledgeIndex, query: str) -> list[tuple[str, float]]:
    """Each entry's best row score for ``query``, in entry order."""
    scores = index.view.term_scores(query_terms(query))
    rows = [index.entry_rows(at) for at in range(len(index.entries))]
    return [
        (entry.card_id, float(scores[found].max()) if found.size else 0.0)
        for entry, found in zip(index.entries, rows, strict=True)
    ]


def assert_answers_as_fresh(index: KnowledgeIndex, query_vectors: list[np.ndarray]) -> None:
    space = embeddings.vector_space()
    fresh = build_index(
        index.version,
        list(search_selectors.knowledge_search_entries()),
        vector_dim=space.dim if space else None,
    )
    assert index.entries == fresh.entries
    for query in QUERIES:
        assert bm25_by_entry(index, query) == bm25_by_entry(fresh, query), query
        for vector in [None, *query_vectors]:
            for kind in ("auto", "knowledge", "corpus"):
                got = index.rank(query, material_type=kind, limit=50, query_vector=vector)
                want = fresh.rank(query, material_type=kind, limit=50, query_vector=vector)
                assert got == want, (query, kind)
    for vector in query_vectors:
        got_scores, want_scores = index.vector_scores(vector), fresh.vector_scores(vector)
        assert (got_scores is None) == (want_scores is None)
        if got_scores is not None and want_scores is not None:
            assert np.array_equal(got_scores, want_scores)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_index_that_took_changes_answers_as_one_built_afresh(seed: int) -> None:
    rng = random.Random(seed)
    embedder = embeddings.get_embedder()
    assert embedder is not None, "the test model is needed"
    query_vectors = [embedder.embed_query(text) for text in ("rubber duck", "猫咪 公园")]
    services.knowledge_enabled_set(enabled=False)
    installed: dict[str, dict[str, Any]] = {}
    for pack_id in PACKS[:2]:
        installed[pack_id] = random_pack(rng, pack_id, None)
        services.knowledge_pack_install(raw=pack_bytes(installed[pack_id]))
    served_index()
    kinds_seen: set[str] = set()
    for _ in range(14):
        read_before = knowledge_index_entries_read()
        kind = rng.choice(["import", "import", "remove", "disable", "type", "embedding", "switch"])
        pack_id = rng.choice(list(installed) or list(PACKS))
        if kind == "import" or pack_id not in installed:
            kind, pack_id = "import", rng.choice(PACKS)
            installed[pack_id] = random_pack(rng, pack_id, installed.get(pack_id))
            services.knowledge_pack_install(raw=pack_bytes(installed[pack_id]))
        elif kind == "remove":
            services.knowledge_pack_remove(pack_id=pack_id)
            del installed[pack_id]
        elif kind == "disable":
            title = rng.choice(installed[pack_id]["entries"])["title"]
            disabled = title_disabled(pack_id, title)
            services.knowledge_entry_disabled_set(pack_id=pack_id, title=title, disabled=not disabled)
        elif kind == "type":
            services.knowledge_pack_material_type_set(
                pack_id=pack_id, material_type=rng.choice([None, "knowledge", "corpus"])
            )
        elif kind == "embedding":
            pack = selectors.knowledge_installed_packs().get(pack_id=pack_id)
            services.knowledge_pack_local_embedding_set(pack_id=pack_id, enabled=not pack.local_embedding)
        else:
            # Switched off, imports fill no vectors; switched on, the fill (inline here) stores them all
            # and moves only the vectors' part of the version.
            switched_on = selectors.knowledge_store().enabled
            services.knowledge_enabled_set(enabled=not switched_on)
        kinds_seen.add(kind)
        index = served_index()
        assert_answers_as_fresh(index, query_vectors)
        # Only the changed pack was read: a removal, the switch or a vector fill reads no entry at all.
        read = knowledge_index_entries_read() - read_before
        if kind in ("remove", "switch"):
            assert read == 0, kind
        else:
            assert read <= len(installed.get(pack_id, {}).get("entries", [])), kind
    assert {"import", "switch"} <= kinds_seen


def title_disabled(pack_id: str, title: str) -> bool:
    pack = selectors.knowledge_installed_packs().get(pack_id=pack_id)
    return title.casefold() in pack.disabled_titles


def test_vectors_filled_after_the_index_was_built_reach_it_without_reading_entries() -> None:
    embedder = embeddings.get_embedder()
    assert embedder is not None, "the test model is needed"
    rng = random.Random(7)
    services.knowledge_enabled_set(enabled=False)  # no fill while it is off
    for pack_id in PACKS:
        services.knowledge_pack_install(raw=pack_bytes(random_pack(rng, pack_id, None)))
    assert not served_index().has_vectors
    read_before = knowledge_index_entries_read()
    services.knowledge_enabled_set(enabled=True)  # the fill runs (inline in tests) and stores them all
    index = served_index()
    assert knowledge_index_entries_read() == read_before
    assert index.vectors.shape[0] == KnowledgeChunk.objects.count()
    assert_answers_as_fresh(index, [embedder.embed_query("rubber duck debugging")])
