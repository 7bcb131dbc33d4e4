"""The knowledge store in a whole memory folder (``export_memory ROOT`` / ``import_memory ROOT``
without ``--character``): ``ROOT/knowledge/`` in the original's layout. Never with ``--character``:
the store is no character's memory."""

from __future__ import annotations

from pathlib import Path

from knowledge.files import PACKS_DIR, REGISTRY_FILE, FolderReading, RegistryInvalid, folder_read
from knowledge.install.selectors import FOLDER_NAME
from knowledge.install.services import knowledge_folder_write, knowledge_store_replace
from knowledge.models import KnowledgePack
from knowledge.packs import PackRejected, pack_decode
from nekomem.portability import ImportResult, MalformedFile, RootFileHandler
from nekomem.runtime.startup import startup_run
from nekomem.runtime.state import is_ready


def read(path: Path) -> FolderReading:
    """The whole folder checked before anything is written: a registry that cannot be used, a pack
    file that is lost or altered, or a pack the store would refuse names its file."""
    try:
        reading = folder_read(path)
    except RegistryInvalid as exc:
        raise MalformedFile(path / REGISTRY_FILE, f"cannot be used ({exc.reason})") from exc
    registry = reading.registry
    if registry is None:
        raise MalformedFile(path / REGISTRY_FILE, "missing")
    for pack_id, reason in sorted(reading.broken.items()):
        raise MalformedFile(path / PACKS_DIR / registry.packs[pack_id].file_name, reason)
    for pack_id, raw in sorted(reading.files.items()):
        file = path / PACKS_DIR / registry.packs[pack_id].file_name
        try:
            pack = pack_decode(raw)
        except PackRejected as exc:
            raise MalformedFile(file, f"pack rejected: {exc.reason}") from exc
        if pack.pack_id != pack_id:
            raise MalformedFile(file, f"holds pack {pack.pack_id!r}, not {pack_id!r}")
    if not is_ready():
        startup_run()  # a command's process: the store refuses writes until the server's checks ran
    return reading


def write(reading: FolderReading) -> ImportResult:
    before = dict(KnowledgePack.objects.values_list("pack_id", "version__sha256"))
    report = knowledge_store_replace(reading=reading, folder=Path(FOLDER_NAME))
    after = dict(KnowledgePack.objects.values_list("pack_id", "version__sha256"))
    created = sum(1 for pack_id in after if pack_id not in before)
    changed = sum(1 for pack_id in after if pack_id in before and before[pack_id] != after[pack_id])
    return ImportResult(
        created=created,
        updated=changed + len(report.removed),
        unchanged=len(after) - created - changed,
    )


def export(path: Path) -> int | None:
    """``ROOT/knowledge/``: the installed packs; None (nothing written) when there are none."""
    if not KnowledgePack.objects.exists():
        return None
    written = knowledge_folder_write(folder=path)
    return len(KnowledgePack.objects.all()) if written is not None else None


HANDLER = RootFileHandler(filename=FOLDER_NAME, read=read, write=write, export=export)
