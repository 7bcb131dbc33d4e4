"""Plain records the knowledge search works on: the store's selectors build them, the index reads them.

The search package knows no model; the store knows no ranking. Both sides import only this module.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

# Entries a source reads from the store at a time, with their chunks: a background build pauses for its
# process's requests after each read (``knowledge.search.snapshot``), so the two agree on it.
ENTRIES_PER_READ = 50


@dataclass(frozen=True, slots=True)
class SearchChunk:
    chunk_id: int
    ordinal: int
    text: str
    # float32 unit vector from the local embedding model, or None while it is not computed yet.
    vector: bytes | None = None


@dataclass(frozen=True, slots=True)
class SearchEntry:
    pack_id: str
    title: str
    # NFKC, whitespace collapsed, casefolded (reference §1.8): what makes a title unique in its pack.
    title_key: str
    material_type: str  # the pack's effective type: "knowledge" | "corpus"
    summary: str
    content: str
    source_name: str
    license: str
    aliases: tuple[str, ...] = ()
    recognition: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    chunks: tuple[SearchChunk, ...] = field(default_factory=tuple)

    @property
    def card_id(self) -> str:
        return f"{self.pack_id}/{self.title_key}"


@dataclass(frozen=True, slots=True)
class SearchManifest:
    """What the store serves, pack by pack, without its entries: enough to tell which packs changed.

    ``packs`` maps each served pack version's key (its installed version's id: a re-import is a new
    key) to what else decides its entries (type, source, disabled titles, embedding policy), in the
    order the store reads entries in. ``model_id``: the model whose vectors count."""

    model_id: str
    packs: dict[int, Hashable]


@runtime_checkable
class SearchSource(Protocol):
    """The store as the index reads it: every entry at once (calling it), or only what changed."""

    def __call__(self) -> Iterable[SearchEntry]: ...

    def manifest(self) -> SearchManifest: ...

    def pack_entries(self, keys: Collection[int]) -> Iterable[tuple[int, SearchEntry]]:
        """The entries of the served pack versions ``keys`` (a key no longer served has none), each
        with its pack's key, in the store's order."""
        ...

    def vectors(self, chunk_ids: Collection[int]) -> dict[int, bytes]:
        """The usable vectors (current model, pack embedding on) stored for ``chunk_ids`` by now."""
        ...


@runtime_checkable
class StoredRowsSource(Protocol):
    """A store that keeps each chunk's BM25 row counted at import (``knowledge.search.stored_rows``)."""

    def bm25_rows(self, chunk_ids: Collection[int]) -> dict[int, bytes]:
        """The stored rows of ``chunk_ids`` (a chunk without one is left out)."""
        ...
