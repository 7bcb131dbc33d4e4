"""import_memory understands an old install's files: memory/recent_<name>.json, the flat
reflections_archive.json, and entries from before the evidence fields (seeded once, reference §2.8,
§2.10, §3.8)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from nekomem.characters.models import Character
from nekomem.journal.models import Event
from persona.models import PersonaSection
from recent.models import RecentMessage
from reflections.models import Reflection
from tests.portability.layout import database_snapshot

pytestmark = pytest.mark.django_db

MARKER = "__evidence_migration_v1__"


def import_memory(folder) -> str:
    out = StringIO()
    call_command("import_memory", str(folder), stdout=out)
    return out.getvalue()


def evidence(name: str) -> dict[str, tuple[str, float, float, bool, bool]]:
    rows = Reflection.objects.filter(character__name=name, archive_shard_path__isnull=True)
    return {
        r.reflection_id: (
            r.status,
            r.reinforcement,
            r.disputation,
            r.rein_last_signal_at is not None,
            r.disp_last_signal_at is not None,
        )
        for r in rows
    }


def marker_of(name: str) -> list[dict]:
    section = PersonaSection.objects.get(character__name=name, key="__meta__")
    return [e for e in section.extra["facts"] if e["id"] == MARKER]


def test_an_old_install_imports_with_its_legacy_files(neko_root):
    import_memory(neko_root / "memory")
    window = RecentMessage.objects.filter(character__name="小白").order_by("position")
    assert [m.data["content"] for m in window][1:] == ["小白，今天的鱼干好吃吗？", "好吃！明天还想要牛奶。"]

    assert evidence("小白") == {
        "ref_legacy0000000001": ("pending", 0.0, 0.0, False, False),
        "ref_legacy0000000002": ("confirmed", 1.0, 0.0, True, False),
        "ref_legacy0000000003": ("promoted", 2.0, 0.0, True, False),
        "ref_legacy0000000004": ("denied", 0.0, 2.0, False, True),
    }
    seeds = Event.objects.filter(character__name="小白", type="reflection.evidence_updated")
    assert sorted(e.payload["reflection_id"] for e in seeds) == [
        "ref_legacy0000000002",
        "ref_legacy0000000003",
        "ref_legacy0000000004",
    ]
    assert {e.payload["source"] for e in seeds} == {"migration_seed"}
    [marker] = marker_of("小白")
    assert marker["source"] == "migration_seed" and marker["protected"] is True

    archived = Reflection.objects.filter(character__name="小白", archive_shard_path__isnull=False)
    assert {r.reflection_id: r.status for r in archived} == {
        "ref_legacy0000000005": "promoted",
        "ref_legacy0000000006": "denied",
    }
    [shard] = {r.archive_shard_path for r in archived}
    assert shard is not None
    assert shard.startswith("2024-06-01_") and shard.endswith(".json")


def test_a_second_import_changes_nothing(neko_root):
    import_memory(neko_root / "memory")
    before = database_snapshot()
    report = import_memory(neko_root / "memory")
    assert database_snapshot() == before
    assert "new," not in report


def test_a_folder_the_original_already_seeded_is_not_seeded_again(neko_root):
    reflections = json.loads((neko_root / "memory/小天/reflections.json").read_text(encoding="utf-8"))
    import_memory(neko_root / "memory")
    rows = Reflection.objects.filter(character__name="小天", archive_shard_path__isnull=True)
    stored = {r.reflection_id: r.reinforcement for r in rows}
    assert stored == {r["id"]: float(r.get("reinforcement", 0.0)) for r in reflections}
    assert not Event.objects.filter(character__name="小天", payload__source="migration_seed").exists()
    assert len(marker_of("小天")) == 1


def test_a_character_with_only_the_legacy_recent_file_is_imported(neko_root):
    (neko_root / "memory/recent_小黑.json").write_text(
        json.dumps([{"type": "human", "data": {"content": "小黑在吗"}}], ensure_ascii=False), encoding="utf-8"
    )
    report = import_memory(neko_root / "memory")
    assert "小黑: new character" in report
    assert Character.objects.filter(name="小黑").exists()
    assert [m.data["content"] for m in RecentMessage.objects.filter(character__name="小黑")] == ["小黑在吗"]


def test_a_flat_archive_the_original_already_sharded_is_not_read(neko_root):
    sentinel = neko_root / "memory/小白/reflection_archive/.migrated_from_flat"
    sentinel.parent.mkdir()
    sentinel.write_text("", encoding="utf-8")
    import_memory(neko_root / "memory")
    assert not Reflection.objects.filter(character__name="小白", archive_shard_path__isnull=False).exists()


def test_the_directorys_own_recent_json_wins_over_the_legacy_file(neko_root):
    (neko_root / "memory/recent_小天.json").write_text(
        json.dumps([{"type": "human", "data": {"content": "旧的"}}], ensure_ascii=False), encoding="utf-8"
    )
    import_memory(neko_root / "memory")
    contents = [m.data["content"] for m in RecentMessage.objects.filter(character__name="小天")]
    assert "旧的" not in contents and contents


def test_the_export_carries_the_marker_and_the_seeded_evidence(neko_root, tmp_path):
    import_memory(neko_root / "memory")
    call_command("export_memory", str(tmp_path / "out"), "--character", "小白", stdout=StringIO())
    persona = json.loads((tmp_path / "out/小白/persona.json").read_text(encoding="utf-8"))
    assert [e["id"] for e in persona["__meta__"]["facts"]] == [MARKER]
    reflections = json.loads((tmp_path / "out/小白/reflections.json").read_text(encoding="utf-8"))
    assert {r["id"]: r["reinforcement"] for r in reflections}["ref_legacy0000000002"] == 1.0
    assert not (tmp_path / "out/小白/reflections_archive.json").exists()
    assert list((tmp_path / "out/小白/reflection_archive").glob("2024-06-01_*.json"))
