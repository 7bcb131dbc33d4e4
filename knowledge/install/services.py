"""Writes between the knowledge store and its folder (``knowledge.files``' layout).

- **Written back on every change.** The store's change listener writes the folder after each
  committed change, in the process that made it (a toggle's request, an import's task): the pack
  files it lacks, then ``registry.json``, then the files no record names any more. Writers take turns
  (``store_lock``), and each writes the store as it is after its own commit, so the last write holds
  every change.
- **Taken in.** In install mode the folder wins at start and at ``continue`` (a restore, a copy from
  another machine, the original's own edits while it ran): the store becomes what the folder holds,
  and the folder is then written back (which changes nothing when both already agree). A pack whose
  file is lost, altered or refused is kept as broken, as the original keeps it.
- **Never over a registry that cannot be trusted.** A ``registry.json`` that does not parse is neither
  taken in nor written over, as the original leaves it; the store keeps what it has.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from django.db import transaction
from django.db.models import F

from install import install_root
from knowledge.files import (
    FolderReading,
    FolderWritten,
    PackRecord,
    Registry,
    RegistryInvalid,
    folder_read,
    folder_write,
    parse_stamp,
    registry_read,
)
from knowledge.install.selectors import knowledge_folder, knowledge_registry, pack_version_bytes
from knowledge.models import KnowledgePack, KnowledgeStore
from knowledge.packs import PackRejected, pack_decode
from knowledge.services import (
    KnowledgeRefused,
    PackState,
    index_refresh_deferred,
    knowledge_enabled_set,
    knowledge_pack_install,
    knowledge_pack_mark_broken,
    knowledge_pack_remove,
)
from nekomem.characters.locks import store_lock
from nekomem.runtime.state import current_block

logger = logging.getLogger(__name__)

FOLDER_LOCK = "knowledge-folder"
# How long a change's write waits for another writer (the holder then writes this change as well).
FOLDER_LOCK_WAIT_SECONDS = 10.0
# Writes of one holder while the store keeps changing under it; the next change's writer goes on.
WRITE_ROUNDS = 5

# Set while the store is being made what a folder holds: the changes of a take-in are written back
# once it has finished, never half-way (which would drop the files of packs not yet taken in).
_taking_in: ContextVar[bool] = ContextVar("knowledge_folder_taking_in", default=False)


class _VersionBytes(Mapping[str, bytes]):
    """Each answering pack's canonical bytes, read from the database only when its file is missing."""

    def __init__(self, versions: dict[str, int]) -> None:
        self._versions = versions

    def __getitem__(self, pack_id: str) -> bytes:
        return pack_version_bytes(version_id=self._versions[pack_id])

    def __iter__(self) -> Iterator[str]:
        return iter(self._versions)

    def __len__(self) -> int:
        return len(self._versions)

    def __contains__(self, pack_id: object) -> bool:
        return pack_id in self._versions


def _store_version() -> int:
    return KnowledgeStore.objects.filter(pk=1).values_list("version", flat=True).first() or 0


def _write_until_current(folder: Path) -> FolderWritten | None:
    """Write the store as it is, again while it changed meanwhile: a writer that gave up waiting
    for the folder's lock committed its change before this check, so the holder writes it."""
    written: FolderWritten | None = None
    for _ in range(WRITE_ROUNDS):
        version = _store_version()
        try:
            previous = registry_read(folder)
        except RegistryInvalid as exc:
            logger.warning(
                "knowledge folder %s: registry.json cannot be trusted (%s); not written", folder, exc
            )
            return None
        registry, versions = knowledge_registry(previous=previous)
        written = folder_write(folder, registry, _VersionBytes(versions))
        if _store_version() == version:
            break
    return written


def knowledge_folder_write(*, folder: Path | None = None) -> FolderWritten | None:
    """Write the store into ``folder`` (default: its own folder); None when nothing was written (a
    registry there that cannot be trusted, or another writer held the folder past the wait: that
    writer writes this change too)."""
    folder = folder if folder is not None else knowledge_folder()
    with store_lock(FOLDER_LOCK, timeout=FOLDER_LOCK_WAIT_SECONDS) as held:
        if not held:
            logger.warning(
                "knowledge folder %s: busy past %.0f s; its writer writes this change",
                folder,
                FOLDER_LOCK_WAIT_SECONDS,
            )
            return None
        return _write_until_current(folder)


def knowledge_folder_changed() -> None:
    """The store's change listener: write the folder back, unless a take-in is under way (it writes
    once at its end) or the install's storage is blocked (``continue`` takes the folder in, then
    writes it)."""
    if _taking_in.get() or (install_root() is not None and current_block() is not None):
        return
    try:
        knowledge_folder_write()
    except Exception:
        # The change itself is committed; the next change (or start) writes the folder again.
        logger.exception("knowledge folder: writing it back failed")


@dataclass
class FolderTakenIn:
    """What a take-in did: the packs installed from their files (or already the same), those kept
    broken and why, those removed because the folder no longer has them; ``refused`` is why nothing
    was taken in (a registry that cannot be trusted)."""

    folder: str
    packs: list[str] = field(default_factory=list)
    broken: dict[str, str] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)
    refused: str = ""


def _state(record: PackRecord) -> PackState:
    return PackState(
        material_type_override=record.material_type_override,
        auto_context=record.auto_context,
        local_embedding=record.local_embedding,
        disabled_titles=record.disabled_titles,
    )


def _times_keep(record: PackRecord, *, sound: bool) -> None:
    """The record's install and update times; and a pack that was broken serves again once its file
    is sound (an install of the version already here builds nothing, so it does not say so)."""
    installed, updated = parse_stamp(record.installed_at), parse_stamp(record.updated_at)
    packs = KnowledgePack.objects.filter(pack_id=record.pack_id)
    with transaction.atomic():
        sound_again = packs.filter(broken=True, version__sha256=record.pack_sha256)
        if sound and sound_again.update(broken=False):
            KnowledgeStore.objects.filter(pk=1).update(version=F("version") + 1)
        if installed is not None and updated is not None:
            packs.update(installed_at=installed, updated_at=updated)


def _holds_already(pack: KnowledgePack | None, record: PackRecord) -> bool:
    """The store already serves this version of the pack with this state and these times."""
    return (
        pack is not None
        and not pack.broken
        and pack.version is not None
        and pack.version.sha256 == record.pack_sha256
        and (pack.material_type_override or None) == record.material_type_override
        and pack.auto_context == record.auto_context
        and pack.local_embedding == record.local_embedding
        and sorted(set(pack.disabled_titles)) == sorted(set(record.disabled_titles))
        and all(
            stamp is None or stamp == held
            for stamp, held in (
                (parse_stamp(record.installed_at), pack.installed_at),
                (parse_stamp(record.updated_at), pack.updated_at),
            )
        )
    )


def knowledge_store_replace(*, reading: FolderReading, folder: Path) -> FolderTakenIn:
    """Make the store what ``reading`` holds: its packs with the user's state, the rest removed, the
    global switch as it says. Installing a pack the store already holds (same sha256) builds
    nothing, so taking in the same folder again changes nothing."""
    report = FolderTakenIn(folder=str(folder))
    registry = reading.registry
    if registry is None:
        return report
    token = _taking_in.set(True)
    try:
        with index_refresh_deferred():
            _store_replace(registry, reading, report)
    finally:
        _taking_in.reset(token)
    return report


def _store_replace(registry: Registry, reading: FolderReading, report: FolderTakenIn) -> None:
    """``knowledge_store_replace``'s changes, one pack after another."""
    # Removals first: the packs taken in must fit the store's capacity without the ones leaving.
    for pack_id in KnowledgePack.objects.exclude(pack_id__in=list(registry.packs)).values_list(
        "pack_id", flat=True
    ):
        try:
            knowledge_pack_remove(pack_id=pack_id)
            report.removed.append(pack_id)
        except KnowledgeRefused:
            pass  # removed meanwhile
    held = {
        pack.pack_id: pack
        for pack in KnowledgePack.objects.select_related("version").defer("version__canonical")
    }
    for pack_id, record in sorted(registry.packs.items()):
        raw = reading.files.get(pack_id)
        reason = reading.broken.get(pack_id, "")
        if raw is not None and _holds_already(held.get(pack_id), record):
            # Nothing to build or set: no write, so the store's version (and its index) stays.
            report.packs.append(pack_id)
            continue
        if raw is not None:
            try:
                if pack_decode(raw).pack_id != pack_id:
                    raise PackRejected("pack_id_mismatch")  # another pack's file: never served as this one
                knowledge_pack_install(raw=raw, state=_state(record))
            except PackRejected as exc:
                reason = exc.reason
            else:
                _times_keep(record, sound=True)
                report.packs.append(pack_id)
                continue
        knowledge_pack_mark_broken(pack_id=pack_id, state=_state(record))
        _times_keep(record, sound=False)
        report.broken[pack_id] = reason or "pack_file_missing"
        logger.warning("knowledge folder: pack %s is kept broken: %s", pack_id, report.broken[pack_id])
    store = KnowledgeStore.objects.filter(pk=1).first()
    if (store.enabled if store is not None else True) != registry.enabled:
        knowledge_enabled_set(enabled=registry.enabled)


def knowledge_folder_take_in(*, folder: Path | None = None) -> FolderTakenIn:
    """Make the store what ``folder`` holds (default: the install's ``knowledge/``), then write the
    folder back. A folder without ``registry.json`` has nothing to take in: the store is written
    there. A registry that cannot be trusted is refused: nothing changes on either side."""
    folder = folder if folder is not None else knowledge_folder()
    # The folder's lock for the whole take-in: a change meanwhile must not write the store half taken
    # in (the final write covers it).
    with store_lock(FOLDER_LOCK, timeout=FOLDER_LOCK_WAIT_SECONDS) as held:
        if not held:
            logger.warning("knowledge folder %s: busy; not taken in", folder)
            return FolderTakenIn(folder=str(folder), refused="knowledge_busy")
        try:
            reading = folder_read(folder)
        except RegistryInvalid as exc:
            logger.warning("knowledge folder %s: registry.json refused (%s); nothing taken in", folder, exc)
            return FolderTakenIn(folder=str(folder), refused=exc.reason)
        report = knowledge_store_replace(reading=reading, folder=folder)
        _write_until_current(folder)
    logger.info(
        "knowledge folder %s taken in: packs=%d broken=%d removed=%d",
        folder,
        len(report.packs),
        len(report.broken),
        len(report.removed),
    )
    return report


def knowledge_install_take_in() -> FolderTakenIn | None:
    """At start and at ``continue``: in install mode, take in the install's ``knowledge/``."""
    if install_root() is None:
        return None
    return knowledge_folder_take_in()
