"""What importing a pack would change, worked out without importing it: the Knowledge page shows this
before the user presses Import. Validation, chunking, the capacity check and the running-job check are
the import's own, in the import's order, so a pack the preview accepts is refused later only when the
store changed meanwhile (another import, a busy store)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from knowledge.packs import Pack, PackEntry, PackRejected, PackSource, pack_decode
from knowledge.selectors import knowledge_imports_pending, knowledge_installed_packs
from knowledge.services import capacity_check, pack_prepare


@dataclass(frozen=True)
class PackPreview:
    pack_id: str
    material_type: str
    source: PackSource
    entries: int
    chunks: int
    installed: bool  # a version of this pack is installed; the lists below are against it
    unchanged: bool  # byte for byte the installed version: importing answers ``unchanged``
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    disabled_kept: int = 0  # disabled entries of the installed pack that the new version still has


def _installed_pack(pack_id: str) -> tuple[Pack, str, list[str]] | None:
    """The installed version of ``pack_id`` (decoded), its sha256 and its disabled title keys."""
    installed = knowledge_installed_packs(with_canonical=True).filter(pack_id=pack_id).first()
    if installed is None or installed.version is None or installed.broken:
        return None  # a broken pack is replaced whole, as the import does
    try:
        pack = pack_decode(bytes(installed.version.canonical))
    except PackRejected:
        return None
    return pack, installed.version.sha256, list(installed.disabled_titles or [])


def knowledge_pack_preview(*, raw: bytes) -> PackPreview:
    """The pack in ``raw`` compared with the installed version of the same pack id; ``PackRejected``
    with the import's reason when the pack would be refused."""
    prepared = pack_prepare(raw=raw)
    pack = prepared.pack
    preview = PackPreview(
        pack_id=pack.pack_id,
        material_type=pack.material_type,
        source=pack.source,
        entries=len(pack.entries),
        chunks=prepared.chunks_total,
        installed=False,
        unchanged=False,
        added=[entry.title for entry in pack.entries],
    )
    installed = _installed_pack(pack.pack_id)
    if installed is not None and prepared.sha256 == installed[1]:
        return replace(preview, installed=True, unchanged=True, added=[])
    if knowledge_imports_pending().filter(pack_id=pack.pack_id).exists():
        raise PackRejected("job_in_progress")
    capacity_check(
        pack_id=pack.pack_id,
        entries=len(pack.entries),
        chunks=prepared.chunks_total,
        size=len(prepared.canonical),
        staged=sum(knowledge_imports_pending().values_list("staged_bytes", flat=True)),
    )
    if installed is None:
        return preview
    old_pack, _, disabled = installed
    old: dict[str, PackEntry] = {entry.key: entry for entry in old_pack.entries}
    new_keys = {entry.key for entry in pack.entries}
    return replace(
        preview,
        installed=True,
        added=[entry.title for entry in pack.entries if entry.key not in old],
        changed=[
            entry.title
            for entry in pack.entries
            if entry.key in old and entry.payload() != old[entry.key].payload()
        ],
        removed=[entry.title for entry in old_pack.entries if entry.key not in new_keys],
        disabled_kept=sum(1 for key in disabled if key in new_keys),
    )
