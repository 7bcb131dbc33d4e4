from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

from persona.models import PersonaArchiveShard, PersonaCorrection, PersonaEntry
from tests.persona.layout import SHARD, build, load

pytestmark = pytest.mark.django_db
NAME = "小天"
FILES = ("persona.json", "persona_corrections.json", f"persona_archive/{SHARD}", "settings.json")


def test_the_persona_files_round_trip_unchanged(tmp_path: Path):
    source = build(tmp_path / "in", NAME)
    call_command("import_memory", str(source))
    assert PersonaEntry.objects.filter(protected=True).count() == 1
    assert PersonaArchiveShard.objects.get().size == 1
    out = tmp_path / "out"
    call_command("export_memory", str(out), "--character", NAME)
    for name in FILES:
        assert load(out / NAME / name) == load(source / NAME / name), name


def test_importing_twice_changes_nothing(tmp_path: Path):
    source = build(tmp_path / "in", NAME)
    call_command("import_memory", str(source))
    before = list(PersonaEntry.objects.order_by("pk").values())
    call_command("import_memory", str(source), "--character", NAME)
    assert list(PersonaEntry.objects.order_by("pk").values()) == before
    assert PersonaCorrection.objects.count() == 2


def test_a_malformed_persona_file_imports_nothing(tmp_path: Path):
    source = build(tmp_path / "in", NAME)
    (source / NAME / "persona.json").write_text('{"master": {"facts": [{"id": 3}]}}', encoding="utf-8")
    with pytest.raises(Exception, match=r"persona\.json"):
        call_command("import_memory", str(source))
    assert not PersonaEntry.objects.filter(section="master", archive_shard_path__isnull=True).exists()
