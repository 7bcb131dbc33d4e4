"""The knowledge folder in install mode, both ways: a folder as the original writes it is taken in, and
what nekomem writes is what the original reads (checked field by field against its format)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from install.folder import install_start_hooks_run
from knowledge.files import PACKS_DIR, REGISTRY_FILE, parse_stamp, registry_parse
from knowledge.install.services import knowledge_folder_take_in
from knowledge.models import KnowledgePack, KnowledgeStore, PackVersion
from knowledge.packs import pack_canonical_bytes, pack_decode
from knowledge.services import (
    knowledge_enabled_set,
    knowledge_entry_disabled_set,
    knowledge_pack_auto_context_set,
    knowledge_pack_install,
    knowledge_pack_local_embedding_set,
    knowledge_pack_material_type_set,
    knowledge_pack_remove,
)
from nekomem.runtime.startup import storage_release
from nekomem.runtime.state import storage_block
from tests.knowledge.factories import fixture_pack

FIXTURE = Path(__file__).parent / "fixtures" / "install" / "knowledge"
# The keys of a pack's record in the original's registry.json, in its order.
RECORD_KEYS = [
    "pack_sha256",
    "source",
    "declared_material_type",
    "material_type_override",
    "entries",
    "chunks",
    "auto_context",
    "local_embedding",
    "disabled_titles",
    "installed_at",
    "updated_at",
]

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def install(tmp_path: Path, settings: Any) -> Path:
    """An install folder whose knowledge/ the original wrote."""
    root = tmp_path / "N.E.K.O"
    shutil.copytree(FIXTURE, root / "knowledge")
    settings.NEKOMEM_NEKO_ROOT = root
    return root / "knowledge"


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def _registry(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / REGISTRY_FILE).read_text(encoding="utf-8"))
    return data


def test_a_folder_the_original_wrote_is_taken_in_at_start(install: Path) -> None:
    before = _snapshot(install)
    install_start_hooks_run()
    packs = {p.pack_id: p for p in KnowledgePack.objects.select_related("version")}
    assert sorted(packs) == ["greeting-styles", "neko-memes"]
    memes, styles = packs["neko-memes"], packs["greeting-styles"]
    assert memes.version is not None and styles.version is not None
    record = _registry(install)["packs"]["neko-memes"]
    assert memes.version.sha256 == record["pack_sha256"]
    assert (memes.version.source_name, memes.version.source_license) == ("猫娘梗百科", "CC BY-SA 4.0")
    assert (memes.material_type_override, memes.auto_context, memes.local_embedding) == ("", False, True)
    assert memes.installed_at == parse_stamp("2026-11-20T08:15:02.412733Z")
    assert styles.effective_material_type == "knowledge" and styles.version.declared_material_type == "corpus"
    assert (styles.auto_context, styles.local_embedding, styles.disabled_titles) == (
        True,
        False,
        ["morning greeting"],
    )
    assert styles.updated_at == parse_stamp("2026-11-22T12:30:45.500000Z")
    assert not memes.broken and not styles.broken
    assert KnowledgeStore.objects.get(pk=1).enabled is True
    # Taken as it is: nekomem's write-back finds nothing to change.
    assert _snapshot(install) == before


def test_taking_the_same_folder_in_again_changes_nothing(install: Path) -> None:
    knowledge_folder_take_in()
    versions = sorted(PackVersion.objects.values_list("pk", flat=True))
    before = _snapshot(install)
    store_version = KnowledgeStore.objects.get(pk=1).version
    report = knowledge_folder_take_in()
    assert report.packs == ["greeting-styles", "neko-memes"] and not report.broken and not report.removed
    # Not even a write: the store's version, which lookups' index is keyed on, stays.
    assert KnowledgeStore.objects.get(pk=1).version == store_version
    assert sorted(PackVersion.objects.values_list("pk", flat=True)) == versions
    assert _snapshot(install) == before


def test_what_nekomem_writes_is_what_the_original_reads(install: Path) -> None:
    knowledge_folder_take_in()
    raw = json.dumps(fixture_pack(), ensure_ascii=False).encode()
    installed = knowledge_pack_install(raw=raw)
    pack_id = installed.pack_id
    entry_title = fixture_pack()["entries"][0]["title"]
    knowledge_entry_disabled_set(pack_id=pack_id, title=f"  {entry_title.upper()} ", disabled=True)
    knowledge_pack_material_type_set(pack_id=pack_id, material_type="corpus")
    knowledge_pack_auto_context_set(pack_id=pack_id, enabled=True)
    knowledge_pack_local_embedding_set(pack_id=pack_id, enabled=False)
    knowledge_enabled_set(enabled=False)

    registry = _registry(install)
    assert list(registry) == ["schema_version", "enabled", "packs"]
    assert registry["schema_version"] == 1 and registry["enabled"] is False
    assert (
        list(registry["packs"])
        == sorted(registry["packs"])
        == sorted([pack_id, "greeting-styles", "neko-memes"])
    )
    record = registry["packs"][pack_id]
    assert list(record) == RECORD_KEYS
    assert list(record["source"]) == ["name", "homepage", "license"]
    pack = fixture_pack()
    assert record["source"]["name"] == pack["source"]["name"]
    assert record["declared_material_type"] == pack["material_type"]
    assert (record["material_type_override"], record["auto_context"], record["local_embedding"]) == (
        "corpus",
        True,
        False,
    )
    assert record["disabled_titles"] == [" ".join(entry_title.split()).casefold()]
    assert record["entries"] == len(pack["entries"]) and record["chunks"] >= record["entries"]
    for stamp in (record["installed_at"], record["updated_at"]):
        assert stamp.endswith("Z") and parse_stamp(stamp) is not None
    # The file: named by the first 16 hex digits of its sha256, canonical JSON the original hashes.
    sha = record["pack_sha256"]
    raw_file = (install / PACKS_DIR / f"pack-{pack_id}.{sha[:16]}.json").read_bytes()
    assert hashlib.sha256(raw_file).hexdigest() == sha
    payload = json.loads(raw_file)
    assert raw_file == json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()
    assert set(payload) == {"schema_version", "pack_id", "material_type", "source", "entries"}
    assert all(set(entry["terms"]) == {"alias", "recognition"} for entry in payload["entries"])
    assert (
        pack_canonical_bytes(pack_decode(raw_file)) == raw_file
    )  # a fixed point: the original hashes the same
    assert (install / REGISTRY_FILE).read_text(encoding="utf-8").startswith('{\n  "schema_version": 1,')
    # As strictly as the original loads it.
    assert registry_parse(registry).packs[pack_id].disabled_titles == tuple(record["disabled_titles"])
    # And it comes back the same: the folder taken in again is the store as it was.
    before = {
        (p.pack_id, p.material_type_override, p.auto_context, p.local_embedding)
        for p in KnowledgePack.objects.all()
    }
    knowledge_folder_take_in()
    after = {
        (p.pack_id, p.material_type_override, p.auto_context, p.local_embedding)
        for p in KnowledgePack.objects.all()
    }
    assert after == before and KnowledgeStore.objects.get(pk=1).enabled is False


def test_a_removed_pack_leaves_the_registry_and_its_file(install: Path) -> None:
    knowledge_folder_take_in()
    file_name = registry_parse(_registry(install)).packs["neko-memes"].file_name
    knowledge_pack_remove(pack_id="neko-memes")
    assert list(_registry(install)["packs"]) == ["greeting-styles"]
    assert not (install / PACKS_DIR / file_name).exists()


def test_a_corrupt_pack_file_marks_that_pack_broken_and_the_others_serve(install: Path) -> None:
    record = registry_parse(_registry(install)).packs["greeting-styles"]
    damaged = install / PACKS_DIR / record.file_name
    damaged.write_bytes(b'{"half": ')
    report = knowledge_folder_take_in()
    assert report.broken == {"greeting-styles": "pack_file_mismatch"} and report.packs == ["neko-memes"]
    styles = KnowledgePack.objects.get(pack_id="greeting-styles")
    assert styles.broken and (styles.auto_context, styles.disabled_titles) == (True, ["morning greeting"])
    assert not KnowledgePack.objects.get(pack_id="neko-memes").broken
    # Written back: the broken pack keeps its record and its file is left as it was.
    assert _registry(install)["packs"]["greeting-styles"] == record.to_json()
    assert damaged.read_bytes() == b'{"half": '
    # The original's file comes back: the pack serves again.
    shutil.copy(FIXTURE / PACKS_DIR / record.file_name, damaged)
    knowledge_folder_take_in()
    assert not KnowledgePack.objects.get(pack_id="greeting-styles").broken


def test_a_registry_that_cannot_be_trusted_is_neither_taken_in_nor_written_over(install: Path) -> None:
    knowledge_folder_take_in()
    (install / REGISTRY_FILE).write_text('{"schema_version": 1, "packs": ', encoding="utf-8")
    report = knowledge_folder_take_in()
    assert report.refused == "invalid_json"
    assert KnowledgePack.objects.count() == 2
    knowledge_pack_auto_context_set(pack_id="neko-memes", enabled=True)
    assert (install / REGISTRY_FILE).read_text(encoding="utf-8") == '{"schema_version": 1, "packs": '


def test_continue_takes_in_a_folder_restored_meanwhile(install: Path) -> None:
    knowledge_folder_take_in()
    storage_block(reason="cloudsave_restore")
    # The restore: the original's registry without one pack, the switch off.
    registry = _registry(install)
    del registry["packs"]["neko-memes"]
    registry["enabled"] = False
    (install / REGISTRY_FILE).write_text(json.dumps(registry, ensure_ascii=False, indent=2), encoding="utf-8")
    knowledge_pack_auto_context_set(pack_id="greeting-styles", enabled=False)  # not written while blocked
    assert _registry(install)["packs"]["greeting-styles"]["auto_context"] is True
    assert storage_release() is None
    assert list(KnowledgePack.objects.values_list("pack_id", flat=True)) == ["greeting-styles"]
    assert KnowledgeStore.objects.get(pk=1).enabled is False
    assert KnowledgePack.objects.get(pack_id="greeting-styles").auto_context is True  # the folder wins
    assert [p.name for p in (install / PACKS_DIR).iterdir()] == [
        registry_parse(registry).packs["greeting-styles"].file_name
    ]


def test_standalone_writes_its_own_folder_and_never_takes_it_in(settings: Any, tmp_path: Path) -> None:
    settings.NEKOMEM_NEKO_ROOT = None
    settings.NEKOMEM_KNOWLEDGE_DIR = tmp_path / "var-knowledge"
    shutil.copytree(FIXTURE, tmp_path / "var-knowledge")
    install_start_hooks_run()
    assert not KnowledgePack.objects.exists()
    knowledge_pack_install(raw=json.dumps(fixture_pack(), ensure_ascii=False).encode())
    registry = _registry(tmp_path / "var-knowledge")
    assert list(registry["packs"]) == [fixture_pack()["pack_id"]]
    assert len(list((tmp_path / "var-knowledge" / PACKS_DIR).iterdir())) == 1


def test_a_take_in_builds_the_lookups_index_once_not_once_a_pack(install: Path) -> None:
    from knowledge.search.index_cache import knowledge_index_builds
    from knowledge.services import knowledge_query

    assert knowledge_query(query="草生")["result"] == "miss"  # this process now answers lookups
    before = knowledge_index_builds()
    report = knowledge_folder_take_in()
    assert len(report.packs) == 2
    assert knowledge_index_builds() == before + 1
    # Built before the take-in returned: the next lookup answers from the packs taken in.
    assert knowledge_query(query="草生")["result"] == "matched"
    assert knowledge_index_builds() == before + 1


def test_a_registry_that_cannot_be_read_shows_in_status_and_on_the_page(install: Path) -> None:
    from django.test import Client

    from knowledge.selectors import knowledge_status

    knowledge_folder_take_in()
    assert knowledge_status()["error_code"] == ""
    (install / REGISTRY_FILE).write_text("{not json", encoding="utf-8")
    status = knowledge_status()
    assert status["error_code"] == "registry_invalid" and status["ready"] is True
    assert status["packs"] == 2  # the store keeps serving what it holds
    page = Client().get("/knowledge/?lang=en").content.decode()
    assert 'data-testid="knowledge-problem"' in page and "registry.json cannot be read" in page
    (install / REGISTRY_FILE).unlink()
    assert knowledge_status()["error_code"] == ""
