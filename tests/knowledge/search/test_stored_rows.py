"""The import counts each chunk's BM25 row once and stores it; a serving process takes a new pack into its
index by reading those rows, tokenising only the ones whose text it makes differently (a row counted for
other names, another tokeniser, none stored), and answers exactly as an index built afresh."""

from __future__ import annotations

import random
import struct
from collections.abc import Collection

import numpy as np
import pytest

from knowledge import search_selectors, services
from knowledge.models import KnowledgeChunk
from knowledge.search import build_index
from knowledge.search.chunking import row_texts
from knowledge.search.index import KnowledgeIndex
from knowledge.search.index_cache import knowledge_index_rows_counted
from knowledge.search.stored_rows import rows_from_stored, rows_stored_form, stored_digest
from knowledge.search.tokenising import counted_flat
from knowledge.search.types import SearchEntry
from tests.knowledge.factories import pack_bytes
from tests.knowledge.search.support import duck, entry, greeting, meme
from tests.knowledge.search.test_index_updates import (
    QUERIES,
    assert_answers_as_fresh,
    bm25_by_entry,
    random_pack,
    served_index,
)

FILLER = [
    entry(f"条目{n}", f"这是第{n}个普通条目，讲的是天气、美食和旅行里的小事情。", pack_id="filler")
    for n in range(12)
]


def rows_of(item: SearchEntry) -> list[str]:
    return row_texts(
        title=item.title,
        aliases=item.aliases,
        recognition=item.recognition,
        summary=item.summary,
        tags=item.tags,
        chunks=[chunk.text for chunk in item.chunks],
    )


def stored_for(*items: SearchEntry, rows: dict[int, str] | None = None) -> dict[int, bytes]:
    """The rows an import would have stored for ``items``' chunks; ``rows`` replaces the text counted
    for some chunk ids (a row stored for other names)."""
    stored: dict[int, bytes] = {}
    for item in items:
        for chunk, text in zip(item.chunks, rows_of(item), strict=True):
            counted = (rows or {}).get(chunk.chunk_id, text)
            stored[chunk.chunk_id] = rows_stored_form([counted])[0]
    return stored


def test_a_stored_row_reads_back_as_its_text_counted() -> None:
    texts = ["绝绝子\njjz\n绝绝子是网络流行语", "Rubber duck debugging\nrubber ducking", "网络 network 網絡"]
    for text, read in zip(texts, rows_from_stored(texts, rows_stored_form(texts)), strict=True):
        counted = counted_flat([text])
        assert read is not None
        for field in ("keys", "tfs", "terms", "lengths"):
            assert np.array_equal(getattr(read, field), getattr(counted, field)), field


def test_a_row_stored_for_another_text_or_damaged_is_not_read() -> None:
    stored = rows_stored_form(["duck one", "duck two"])
    assert rows_from_stored(["duck one"], [stored[1]]) == [None]
    assert rows_from_stored(["duck one"], [stored[0][:-1]]) == [None]
    assert rows_from_stored(["duck one"], [None]) == [None]
    assert rows_from_stored(["duck one"], [stored[0]])[0] is not None


def test_rows_added_are_read_as_stored_and_answer_as_tokenised() -> None:
    first = build_index("v1", [meme(), *FILLER])
    later = [meme(), *FILLER, duck(), greeting()]
    asked: list[int] = []

    def stored_rows(chunk_ids: Collection[int]) -> dict[int, bytes]:
        asked.extend(chunk_ids)
        return stored_for(duck(), greeting())

    read = build_index("v2", later, previous=first, stored_rows=stored_rows)
    tokenised = build_index("v2", later, previous=first)
    new_chunks = [chunk.chunk_id for item in (duck(), greeting()) for chunk in item.chunks]
    assert sorted(asked) == sorted(new_chunks)  # only the added rows are asked for
    assert (read.rows_read, read.rows_tokenised) == (len(new_chunks), 0)
    assert (tokenised.rows_read, tokenised.rows_tokenised) == (0, len(new_chunks))
    assert_same_answers(read, tokenised, ["rubber duck", "duck debugging", "早安", "绝绝子", "天气美食"])


def test_a_row_stored_for_other_names_is_tokenised_again() -> None:
    first = build_index("v1", [meme(), *FILLER])
    renamed = duck()
    old_names = rows_of(entry("Quackery", renamed.content, summary=renamed.summary, tags=renamed.tags))
    stale = {chunk.chunk_id: text for chunk, text in zip(renamed.chunks, old_names, strict=True)}
    later = [meme(), *FILLER, renamed, greeting()]
    index = build_index(
        "v2", later, previous=first, stored_rows=lambda _: stored_for(renamed, greeting(), rows=stale)
    )
    assert index.rows_tokenised == len(renamed.chunks)
    assert index.rows_read == len(greeting().chunks)
    assert_same_answers(index, build_index("v2", later), ["Quackery", "rubber ducking", "早安"])
    hits = index.rank("Quackery", material_type="auto", limit=5)
    assert not hits  # the name the stale row was counted for finds nothing


def test_a_row_with_nothing_stored_is_tokenised() -> None:
    first = build_index("v1", [meme(), *FILLER])
    later = [meme(), *FILLER, duck(), greeting()]
    index = build_index("v2", later, previous=first, stored_rows=lambda _: stored_for(greeting()))
    assert (index.rows_read, index.rows_tokenised) == (len(greeting().chunks), len(duck().chunks))
    assert_same_answers(index, build_index("v2", later), ["rubber duck", "早安"])


def assert_same_answers(
    index: KnowledgeIndex, other: KnowledgeIndex, queries: list[str], *, limit: int = 10
) -> None:
    for query in queries:
        assert bm25_by_entry(index, query) == bm25_by_entry(other, query), query
        assert index.rank(query, material_type="auto", limit=limit) == other.rank(
            query, material_type="auto", limit=limit
        ), query


@pytest.mark.django_db(transaction=True)
def test_an_import_stores_each_chunks_row_and_a_server_takes_the_pack_by_reading_them() -> None:
    rng = random.Random(11)
    services.knowledge_enabled_set(enabled=False)  # BM25 only: no vector fill
    services.knowledge_pack_install(raw=pack_bytes(random_pack(rng, "alpha.test", None)))
    served_index()
    read_before, tokenised_before = knowledge_index_rows_counted()
    services.knowledge_pack_install(raw=pack_bytes(random_pack(rng, "beta.test", None)))
    index = served_index()
    chunks = KnowledgeChunk.objects.filter(version__pack_id="beta.test").select_related("entry")
    assert chunks.exists()
    for chunk in chunks:
        item = chunk.entry
        text = row_texts(
            title=item.title,
            aliases=item.aliases,
            recognition=item.recognition,
            summary=item.summary,
            tags=item.tags,
            chunks=[chunk.text],
        )[0]
        stored = rows_from_stored([text], [bytes(chunk.bm25_row or b"")])[0]
        assert stored is not None and np.array_equal(stored.keys, counted_flat([text]).keys)
    read, tokenised = knowledge_index_rows_counted()
    assert (read - read_before, tokenised - tokenised_before) == (chunks.count(), 0)
    assert_answers_as_fresh(index, [])


@pytest.mark.django_db(transaction=True)
def test_rows_the_store_holds_for_other_text_are_tokenised_again() -> None:
    rng = random.Random(12)
    services.knowledge_enabled_set(enabled=False)
    services.knowledge_pack_install(raw=pack_bytes(random_pack(rng, "alpha.test", None)))
    first = build_index("v1", list(search_selectors.knowledge_search_entries()))
    services.knowledge_pack_install(raw=pack_bytes(random_pack(rng, "beta.test", None)))
    # As rows counted by an older tokeniser, or for names the entry no longer has, read: some of the
    # new pack's rows stored for another text, one with none stored.
    chunks = list(KnowledgeChunk.objects.filter(version__pack_id="beta.test").order_by("id"))
    assert len(chunks) >= 3
    for chunk in chunks[:2]:
        KnowledgeChunk.objects.filter(pk=chunk.pk).update(bm25_row=rows_stored_form([f"x {chunk.text}"])[0])
    KnowledgeChunk.objects.filter(pk=chunks[2].pk).update(bm25_row=None)
    records = list(search_selectors.knowledge_search_entries())
    index = build_index(
        "v2", records, previous=first, stored_rows=search_selectors.knowledge_search_bm25_rows
    )
    assert (index.rows_read, index.rows_tokenised) == (len(chunks) - 3, 3)
    fresh = build_index("v2", records)
    assert index.entries == fresh.entries
    assert_same_answers(index, fresh, QUERIES, limit=50)


@pytest.mark.django_db(transaction=True)
def test_a_reimport_keeps_the_rows_it_counted_for_unchanged_text_and_counts_the_changed_ones() -> None:
    services.knowledge_enabled_set(enabled=False)
    pack = random_pack(random.Random(13), "alpha.test", None)
    services.knowledge_pack_install(raw=pack_bytes(pack))
    kept, changed = pack["entries"][0], pack["entries"][1]
    old = {
        chunk.entry.title: chunk
        for chunk in KnowledgeChunk.objects.filter(version__pack_id="alpha.test").select_related("entry")
    }
    # A marker under the kept row's digest: found again in the new version only if it was taken as it
    # is rather than counted again.
    marker = stored_digest(bytes(old[kept["title"]].bm25_row or b"")) + struct.pack("<i", 1) + bytes(9)
    KnowledgeChunk.objects.filter(pk=old[kept["title"]].pk).update(bm25_row=marker)
    changed["content"] = "an entirely new text about green tea 绿茶"
    services.knowledge_pack_install(raw=pack_bytes(pack))
    new = {
        chunk.entry.title: chunk
        for chunk in KnowledgeChunk.objects.filter(version__pack_id="alpha.test").select_related("entry")
    }
    assert new[kept["title"]].version_id != old[kept["title"]].version_id
    assert bytes(new[kept["title"]].bm25_row or b"") == marker
    item = new[changed["title"]].entry
    text = row_texts(
        title=item.title,
        aliases=item.aliases,
        recognition=item.recognition,
        summary=item.summary,
        tags=item.tags,
        chunks=[new[changed["title"]].text],
    )[0]
    assert bytes(new[changed["title"]].bm25_row or b"") == rows_stored_form([text])[0]
