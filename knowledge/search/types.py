"""Plain records the knowledge search works on: the store's selectors build them, the index reads them.

The search package knows no model; the store knows no ranking. Both sides import only this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field


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
