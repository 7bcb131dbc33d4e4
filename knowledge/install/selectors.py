"""The store as the original's ``registry.json`` records it."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from install import install_root
from knowledge.files import PackRecord, Registry, RegistryInvalid, SourceRecord, registry_read, utc_stamp
from knowledge.models import KnowledgePack, KnowledgeStore, PackVersion

FOLDER_NAME = "knowledge"


def knowledge_folder() -> Path:
    """Where the store's files live: the install's ``knowledge/`` (beside ``memory/``), else under
    ``var/`` (``NEKOMEM_KNOWLEDGE_DIR``)."""
    root = install_root()
    if root is not None:
        return root / FOLDER_NAME
    return Path(settings.NEKOMEM_KNOWLEDGE_DIR)


def knowledge_folder_problem() -> str:
    """``registry_invalid`` while the folder's ``registry.json`` cannot be read (so the folder is
    neither taken in nor written), else "": the operator sees it in ``GET /status`` and on the page."""
    try:
        registry_read(knowledge_folder())
    except RegistryInvalid:
        return "registry_invalid"
    return ""


def _state_of(pack: KnowledgePack, record: PackRecord) -> PackRecord:
    """``record`` carrying the user's state of ``pack`` as stored here."""
    return PackRecord(
        pack_id=record.pack_id,
        pack_sha256=record.pack_sha256,
        source=record.source,
        declared_material_type=record.declared_material_type,
        entries=record.entries,
        chunks=record.chunks,
        material_type_override=pack.material_type_override or None,
        auto_context=pack.auto_context,
        local_embedding=pack.local_embedding,
        disabled_titles=tuple(sorted(set(pack.disabled_titles))),
        installed_at=utc_stamp(pack.installed_at),
        updated_at=utc_stamp(pack.updated_at),
    )


def knowledge_registry(*, previous: Registry | None = None) -> tuple[Registry, dict[str, int]]:
    """The registry of what is installed, and the ``PackVersion`` id of each pack that answers.

    A broken pack has no version this store can vouch for: its record is the one ``previous`` (the
    folder as it is) holds, with the user's state from here, and its file is left as it is; a broken
    pack ``previous`` does not know is left out. A pack whose first import is still building is not
    installed yet."""
    store = KnowledgeStore.objects.filter(pk=1).first()
    records: dict[str, PackRecord] = {}
    versions: dict[str, int] = {}
    packs = KnowledgePack.objects.select_related("version").defer("version__canonical").order_by("pack_id")
    for pack in packs:
        version: PackVersion | None = pack.version
        if pack.broken or version is None:
            known = previous.packs.get(pack.pack_id) if previous is not None else None
            if pack.broken and known is not None:
                records[pack.pack_id] = _state_of(pack, known)
            continue
        record = PackRecord(
            pack_id=pack.pack_id,
            pack_sha256=version.sha256,
            source=SourceRecord(version.source_name, version.source_homepage, version.source_license),
            declared_material_type=version.declared_material_type,
            entries=version.entries_total,
            chunks=version.chunks_total,
        )
        records[pack.pack_id] = _state_of(pack, record)
        versions[pack.pack_id] = version.pk
    return Registry(enabled=store.enabled if store is not None else True, packs=records), versions


def pack_version_bytes(*, version_id: int) -> bytes:
    """A version's canonical bytes: what its file in ``packs/`` holds."""
    return bytes(PackVersion.objects.values_list("canonical", flat=True).get(pk=version_id))
