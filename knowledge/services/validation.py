"""A pack checked and chunked before anything is written, and the store's capacity for it."""

from __future__ import annotations

from dataclasses import dataclass

from knowledge.models import PackVersion
from knowledge.packs import (
    MAX_CHUNKS_PER_PACK,
    MAX_PACK_BYTES,
    MAX_PACKS,
    MAX_TOTAL_CHUNKS,
    MAX_TOTAL_ENTRIES,
    MAX_TOTAL_PACK_BYTES,
    Pack,
    PackRejected,
    pack_canonical_bytes,
    pack_decode,
    pack_from_canonical,
    pack_sha256,
)
from knowledge.search import entry_chunks


def _entry_chunks(*, title: str, summary: str, content: str) -> list[str]:
    return list(entry_chunks(title=title, summary=summary, content=content))


@dataclass(frozen=True)
class PreparedPack:
    pack: Pack
    canonical: bytes
    sha256: str
    chunks: list[list[str]]

    @property
    def chunks_total(self) -> int:
        return sum(len(texts) for texts in self.chunks)


def pack_prepare(*, raw: bytes, canonical_sha256: str = "") -> PreparedPack:
    """Validate ``raw`` and chunk its entries, or ``PackRejected`` (no write). ``canonical_sha256``:
    ``raw`` is the canonical form this store staged, with that hash (checked): it is read as it is."""
    if canonical_sha256 and pack_sha256(raw) == canonical_sha256:
        pack = pack_from_canonical(raw)
        chunks = [
            _entry_chunks(title=entry.title, summary=entry.summary, content=entry.content)
            for entry in pack.entries
        ]
        return PreparedPack(pack=pack, canonical=raw, sha256=canonical_sha256, chunks=chunks)
    # Not what was staged (damaged since): validated afresh, and refused unless it is that pack.
    pack = pack_decode(raw)
    canonical = pack_canonical_bytes(pack)
    if canonical_sha256 and pack_sha256(canonical) != canonical_sha256:
        raise PackRejected("knowledge_error")
    if len(canonical) > MAX_PACK_BYTES:
        # Normalisation fills in omitted fields and can grow a pack; what is kept is what counts.
        raise PackRejected("pack_too_large")
    chunks = [
        _entry_chunks(title=entry.title, summary=entry.summary, content=entry.content)
        for entry in pack.entries
    ]
    return PreparedPack(pack=pack, canonical=canonical, sha256=pack_sha256(canonical), chunks=chunks)


def capacity_check(*, pack_id: str, entries: int, chunks: int, size: int, staged: int = 0) -> None:
    others = PackVersion.objects.filter(installed_as__isnull=False).exclude(pack_id=pack_id)
    counts = list(others.values_list("entries_total", "chunks_total", "size_bytes"))
    if len(counts) + 1 > MAX_PACKS:
        raise PackRejected("capacity_packs")
    if sum(row[0] for row in counts) + entries > MAX_TOTAL_ENTRIES:
        raise PackRejected("capacity_entries")
    if sum(row[1] for row in counts) + chunks > MAX_TOTAL_CHUNKS:
        raise PackRejected("capacity_chunks")
    if chunks > MAX_CHUNKS_PER_PACK:
        raise PackRejected("too_many_chunks")
    if sum(row[2] for row in counts) + staged + size > MAX_TOTAL_PACK_BYTES:
        raise PackRejected("capacity_bytes")
