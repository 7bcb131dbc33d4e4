"""The knowledge store in a whole memory folder: ``export_memory`` / ``import_memory`` without
``--character`` carry it as ``ROOT/knowledge/`` in the original's layout; with it, never."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from knowledge.files import PACKS_DIR, REGISTRY_FILE, folder_read
from knowledge.models import KnowledgePack, KnowledgeStore
from knowledge.services import (
    knowledge_enabled_set,
    knowledge_entry_disabled_set,
    knowledge_pack_install,
    knowledge_pack_remove,
    knowledge_store_clear,
)
from nekomem.characters.models import Character
from nekomem.characters.services import character_get_or_create
from tests.knowledge.factories import fixture_pack

FIXTURE = Path(__file__).parent / "fixtures" / "install" / "knowledge"

pytestmark = pytest.mark.django_db


def _install_fixture_pack() -> str:
    pack = knowledge_pack_install(raw=json.dumps(fixture_pack(), ensure_ascii=False).encode())
    knowledge_entry_disabled_set(
        pack_id=pack.pack_id, title=fixture_pack()["entries"][0]["title"], disabled=True
    )
    return pack.pack_id


def _state() -> list[tuple[object, ...]]:
    return [
        (p.pack_id, p.version.sha256 if p.version else None, p.disabled_titles, p.auto_context)
        for p in KnowledgePack.objects.select_related("version").order_by("pack_id")
    ]


def test_the_store_round_trips_through_a_whole_export(tmp_path: Path) -> None:
    pack_id = _install_fixture_pack()
    knowledge_enabled_set(enabled=False)
    before = _state()
    call_command("export_memory", str(tmp_path), verbosity=0)
    reading = folder_read(tmp_path / "knowledge")
    assert reading.registry is not None and list(reading.registry.packs) == [pack_id]
    assert reading.registry.enabled is False and reading.broken == {}
    knowledge_store_clear()
    knowledge_enabled_set(enabled=True)
    call_command("import_memory", str(tmp_path), verbosity=0)
    assert _state() == before
    assert KnowledgeStore.objects.get(pk=1).enabled is False
    assert not Character.objects.filter(name="knowledge").exists()  # the store's folder is no character


def test_a_folder_the_original_wrote_imports_and_replaces_the_store(tmp_path: Path) -> None:
    _install_fixture_pack()
    shutil.copytree(FIXTURE, tmp_path / "knowledge")
    call_command("import_memory", str(tmp_path), verbosity=0)
    assert list(KnowledgePack.objects.order_by("pack_id").values_list("pack_id", flat=True)) == [
        "greeting-styles",
        "neko-memes",
    ]
    assert KnowledgePack.objects.get(pack_id="greeting-styles").disabled_titles == ["morning greeting"]
    state = _state()
    call_command("import_memory", str(tmp_path), verbosity=0)  # again: nothing changes
    assert _state() == state


def test_a_damaged_pack_file_refuses_the_whole_import(tmp_path: Path) -> None:
    pack_id = _install_fixture_pack()
    before = _state()
    shutil.copytree(FIXTURE, tmp_path / "knowledge")
    damaged = next((tmp_path / "knowledge" / PACKS_DIR).glob("pack-neko-memes.*.json"))
    damaged.write_text("{}", encoding="utf-8")
    problem = f"knowledge/{PACKS_DIR}/{damaged.name}: pack_file_mismatch"
    with pytest.raises(CommandError, match=re.escape(problem)):
        call_command("import_memory", str(tmp_path), verbosity=0)
    assert _state() == before and before[0][0] == pack_id


def test_an_untrusted_registry_refuses_the_whole_import(tmp_path: Path) -> None:
    (tmp_path / "knowledge").mkdir()
    (tmp_path / "knowledge" / REGISTRY_FILE).write_text("[]", encoding="utf-8")
    problem = "knowledge/registry.json: cannot be used (unsupported_schema_version)"
    with pytest.raises(CommandError, match=re.escape(problem)):
        call_command("import_memory", str(tmp_path), verbosity=0)


def test_a_character_export_or_import_never_carries_the_store(tmp_path: Path) -> None:
    _install_fixture_pack()
    character_get_or_create(name="小天")
    call_command("export_memory", str(tmp_path), character="小天", verbosity=0)
    assert not (tmp_path / "knowledge").exists()
    shutil.copytree(FIXTURE, tmp_path / "knowledge")
    before = _state()
    call_command("import_memory", str(tmp_path), character="小天", verbosity=0)
    assert _state() == before


def test_an_empty_store_exports_nothing(tmp_path: Path) -> None:
    pack_id = _install_fixture_pack()
    knowledge_pack_remove(pack_id=pack_id)
    call_command("export_memory", str(tmp_path), verbosity=0)
    assert not (tmp_path / "knowledge").exists()
