"""What a process's knowledge index was built from, pack by pack, and the reads of a build: from a
``SearchSource`` only the packs whose version or state changed since (and the vectors filled since),
every entry otherwise."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

from knowledge.search.types import ENTRIES_PER_READ, SearchEntry, SearchSource


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What an index was built from, pack by pack (a ``SearchSource``'s manifest and each pack's
    entries), so the next build reads only the packs whose key or state changed."""

    version: str
    model_id: str
    packs: dict[int, Hashable]
    entries: dict[int, tuple[SearchEntry, ...]]


def read_for_build(
    version: str,
    load: Callable[[], Iterable[SearchEntry]],
    snapshot: Snapshot | None,
    pause: Callable[[], object],
) -> tuple[list[SearchEntry], Snapshot | None, int]:
    """The entries of ``version``, what they were read from, and how many were read from the store.

    From a ``SearchSource`` with the ``snapshot`` of the index answering now, only the packs whose key
    or state changed are read (and, when the vectors moved, the vectors of the chunks that had none);
    every entry otherwise (a first build, another model, a plain loader)."""
    if not isinstance(load, SearchSource):
        everything = _gathered(load(), pause)
        return everything, None, len(everything)
    manifest = load.manifest()  # before the entries: a change made meanwhile shows at the next read
    if snapshot is not None and snapshot.model_id != manifest.model_id:
        snapshot = None
    kept: dict[int, tuple[SearchEntry, ...]] = {}
    if snapshot is not None:
        kept = {
            key: entries
            for key, entries in snapshot.entries.items()
            if key in manifest.packs and snapshot.packs.get(key) == manifest.packs[key]
        }
        vectors = _vectors_part(version)
        if vectors is None or vectors != _vectors_part(snapshot.version):
            kept = _with_new_vectors(kept, load, pause)
    read: dict[int, list[SearchEntry]] = {}
    count = 0
    for count, (key, entry) in enumerate(
        load.pack_entries([key for key in manifest.packs if key not in kept]), 1
    ):
        read.setdefault(key, []).append(entry)
        if count % ENTRIES_PER_READ == 0:
            pause()
    by_pack = {key: kept[key] if key in kept else tuple(read.get(key, ())) for key in manifest.packs}
    entries = [entry for pack in by_pack.values() for entry in pack]
    return entries, Snapshot(version, manifest.model_id, dict(manifest.packs), by_pack), count


def _vectors_part(version: str) -> str | None:
    return version.split("#", 1)[1] if "#" in version else None


def _with_new_vectors(
    packs: dict[int, tuple[SearchEntry, ...]], source: SearchSource, pause: Callable[[], object]
) -> dict[int, tuple[SearchEntry, ...]]:
    """``packs`` with the vectors stored since they were read (the background fill only adds vectors;
    a model or policy change is another manifest)."""
    missing = [
        chunk.chunk_id
        for pack in packs.values()
        for entry in pack
        for chunk in entry.chunks
        if chunk.vector is None
    ]
    if not missing:
        return packs
    pause()
    found = source.vectors(missing)
    if not found:
        return packs
    updated: dict[int, tuple[SearchEntry, ...]] = {}
    for key, pack in packs.items():
        updated[key] = tuple(
            dataclasses.replace(
                entry,
                chunks=tuple(
                    dataclasses.replace(chunk, vector=found[chunk.chunk_id])
                    if chunk.vector is None and chunk.chunk_id in found
                    else chunk
                    for chunk in entry.chunks
                ),
            )
            if any(chunk.vector is None and chunk.chunk_id in found for chunk in entry.chunks)
            else entry
            for entry in pack
        )
    return updated


def _gathered(records: Iterable[SearchEntry], pause: Callable[[], object]) -> list[SearchEntry]:
    """``records`` read into a list, pausing between slices (a background build: behind the requests;
    reading 20 000 entries holds the GIL for seconds)."""
    gathered: list[SearchEntry] = []
    for record in records:
        gathered.append(record)
        if len(gathered) % ENTRIES_PER_READ == 0:
            pause()
    return gathered
