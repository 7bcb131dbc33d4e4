"""Reads of the public knowledge store as the search index takes them: every entry of the served packs,
or (``KnowledgeSearchSource``) the packs' manifest, the entries of some packs and the vectors filled
since, so a process's index reads only what changed."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any, NamedTuple

from knowledge.models import KnowledgeChunk, KnowledgeEntry, KnowledgePack
from knowledge.search.types import ENTRIES_PER_READ, SearchChunk, SearchEntry, SearchManifest
from knowledge.selectors import knowledge_embedding, serving_packs

# Chunk ids asked for at once, of vectors or BM25 rows (SQLite's limit on a statement's parameters is
# far above it).
VECTOR_IDS_PER_QUERY = 900


def knowledge_search_entries() -> Iterator[SearchEntry]:
    """Every enabled entry of every served pack, with its chunks (vectors of the current model, and only
    for packs whose local embedding is on), as the search index is built from."""
    for _, entry in _search_entries(serving_packs(), knowledge_embedding().model_id):
        yield entry


def _pack_signature(pack: KnowledgePack) -> tuple[Any, ...]:
    """What decides a served pack's search entries besides its version's rows (see ``SearchManifest``)."""
    version = pack.version
    assert version is not None
    return (
        pack.pack_id,
        pack.effective_material_type,
        version.source_name,
        version.source_license,
        tuple(sorted(pack.disabled_titles)),
        pack.local_embedding,
    )


def knowledge_search_manifest() -> SearchManifest:
    """The served packs' keys and state, in the order ``knowledge_search_entries`` reads them."""
    packs = serving_packs()
    return SearchManifest(
        model_id=knowledge_embedding().model_id,
        packs={key: _pack_signature(packs[key]) for key in sorted(packs)},
    )


def knowledge_search_pack_entries(keys: Collection[int]) -> Iterator[tuple[int, SearchEntry]]:
    """The search entries of the served pack versions ``keys``, each with its key."""
    wanted = set(keys)
    packs = {key: pack for key, pack in serving_packs().items() if key in wanted}
    return _search_entries(packs, knowledge_embedding().model_id) if packs else iter(())


def knowledge_search_vectors(chunk_ids: Collection[int]) -> dict[int, bytes]:
    """The vectors stored by now for ``chunk_ids`` that a search would use (the current model's, of a
    served pack whose local embedding is on)."""
    model_id = knowledge_embedding().model_id
    if not model_id:
        return {}
    ids = sorted(set(chunk_ids))
    found: dict[int, bytes] = {}
    for start in range(0, len(ids), VECTOR_IDS_PER_QUERY):
        found.update(
            (chunk_id, bytes(vector))
            for chunk_id, vector in KnowledgeChunk.objects.filter(
                id__in=ids[start : start + VECTOR_IDS_PER_QUERY],
                model_id=model_id,
                vector__isnull=False,
                version__installed_as__local_embedding=True,
                version__installed_as__broken=False,
            ).values_list("id", "vector")
            if vector is not None
        )
    return found


def knowledge_search_bm25_rows(chunk_ids: Collection[int]) -> dict[int, bytes]:
    """The BM25 rows the import counted for ``chunk_ids`` (``knowledge.search.stored_rows``); a chunk
    written without one is left out."""
    ids = sorted(set(chunk_ids))
    found: dict[int, bytes] = {}
    for start in range(0, len(ids), VECTOR_IDS_PER_QUERY):
        found.update(
            (chunk_id, bytes(row))
            for chunk_id, row in KnowledgeChunk.objects.filter(
                id__in=ids[start : start + VECTOR_IDS_PER_QUERY], bm25_row__isnull=False
            ).values_list("id", "bm25_row")
            if row is not None
        )
    return found


class KnowledgeSearchSource:
    """The store as the search index reads it (``knowledge.search.types.SearchSource``): whole, or
    only the packs that changed since the index's last read."""

    def __call__(self) -> Iterator[SearchEntry]:
        return knowledge_search_entries()

    def manifest(self) -> SearchManifest:
        return knowledge_search_manifest()

    def pack_entries(self, keys: Collection[int]) -> Iterator[tuple[int, SearchEntry]]:
        return knowledge_search_pack_entries(keys)

    def vectors(self, chunk_ids: Collection[int]) -> dict[int, bytes]:
        return knowledge_search_vectors(chunk_ids)

    def bm25_rows(self, chunk_ids: Collection[int]) -> dict[int, bytes]:
        return knowledge_search_bm25_rows(chunk_ids)


knowledge_search_source = KnowledgeSearchSource()


class _PackShared(NamedTuple):
    """What every entry of a served pack shares."""

    pack_id: str
    material_type: str
    source_name: str
    license: str
    disabled: frozenset[str]


def _search_entries(packs: dict[int, KnowledgePack], model_id: str) -> Iterator[tuple[int, SearchEntry]]:
    """The packs' entries, read ``ENTRIES_PER_READ`` at a time with their chunks: a background build
    pauses for the process's requests between them (all of a 5 000-entry pack's chunks converted in one
    step held the interpreter lock for a tenth of a second)."""
    vectors_for = {version_id for version_id, pack in packs.items() if pack.local_embedding}
    # Worked out once a pack rather than once an entry (with plain rows instead of model instances, a
    # third of reading 20 000 entries).
    shared: dict[int, _PackShared] = {}
    for version_id, pack in packs.items():
        version = pack.version
        assert version is not None
        shared[version_id] = _PackShared(
            pack.pack_id,
            pack.effective_material_type,
            version.source_name,
            version.source_license,
            frozenset(pack.disabled_titles),
        )
    rows = (
        KnowledgeEntry.objects.filter(version_id__in=list(packs))
        .order_by("version_id", "ordinal")
        .values_list(
            "id", "version_id", "title", "title_key", "summary", "content", "aliases", "recognition", "tags"
        )
        .iterator(chunk_size=ENTRIES_PER_READ)
    )
    block: list[tuple[Any, ...]] = []
    for row in rows:
        _, version_id, _, key, *_ = row
        if key in shared[version_id].disabled:
            continue
        block.append(row)
        if len(block) == ENTRIES_PER_READ:
            yield from _block_entries(block, shared, vectors_for, model_id)
            block = []
    yield from _block_entries(block, shared, vectors_for, model_id)


def _block_entries(
    rows: list[tuple[Any, ...]], shared: dict[int, _PackShared], vectors_for: set[int], model_id: str
) -> Iterator[tuple[int, SearchEntry]]:
    """The search entries of ``rows`` (entry rows of served packs), their chunks read in one query."""
    if not rows:
        return
    chunks: dict[int, list[SearchChunk]] = {}
    for chunk_id, entry_id, version_id, ordinal, text, vector, chunk_model in (
        KnowledgeChunk.objects.filter(entry_id__in=[row[0] for row in rows])
        .order_by("entry_id", "ordinal")
        .values_list("id", "entry_id", "version_id", "ordinal", "text", "vector", "model_id")
    ):
        usable = vector is not None and model_id and chunk_model == model_id and version_id in vectors_for
        chunks.setdefault(entry_id, []).append(
            SearchChunk(
                chunk_id=chunk_id,
                ordinal=ordinal,
                text=text,
                vector=bytes(vector) if usable and vector is not None else None,
            )
        )
    for entry_id, version_id, title, key, summary, content, aliases, recognition, tags in rows:
        pack = shared[version_id]
        yield (
            version_id,
            SearchEntry(
                pack_id=pack.pack_id,
                title=title,
                title_key=key,
                material_type=pack.material_type,
                summary=summary,
                content=content,
                source_name=pack.source_name,
                license=pack.license,
                aliases=tuple(aliases),
                recognition=tuple(recognition),
                tags=tuple(tags),
                chunks=tuple(chunks.get(entry_id, ())),
            ),
        )
