"""A directory in the original layout, with reflections in every status, imports and exports unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from nekomem.journal.services import events_reconcile
from reflections.models import ArchiveShard, Reflection, SurfacedReflection
from reflections.services.records import reflection_id_for

pytestmark = pytest.mark.django_db
NAME = "小天"
SHARD = "2024-06-01_0a1b2c3d.json"


def entry(n: int, status: str, **fields: Any) -> dict[str, Any]:
    ids = [f"fact_20240501120000_{n:08x}", f"fact_20240501120100_{n:08x}"]
    record: dict[str, Any] = {
        "id": reflection_id_for(ids),
        "text": f"主人似乎很喜欢第{n}种爱好",
        "entity": "master",
        "status": status,
        "source_fact_ids": ids,
        "feedback": None,
        "relation_type": "preference",
        "temporal_scope": "pattern",
        "subject": "爱好",
        "event_when_raw": None,
        "schema_version": 2,
        # Raw values: an export must not decay them.
        "reinforcement": 1.4,
        "disputation": 0.3,
        "sub_zero_days": 0,
        "user_fact_reinforce_count": 2,
        "absorbed_into": None,
        "promote_attempt_count": 0,
        "promote_blocked_reason": None,
        "recent_mentions": [],
        "suppress": False,
        "last_refine_cluster_hash": None,
        "sub_zero_last_increment_date": None,
        "created_at": "2024-05-01T12:00:00",
        "next_eligible_at": "2024-05-01T12:30:00",
        "event_start_at": None,
        "event_end_at": None,
        "rein_last_signal_at": "2024-05-02T08:00:00.250000",
        "disp_last_signal_at": "2024-05-03T09:00:00",
        "last_promote_attempt_at": None,
        "suppressed_at": None,
        "last_refine_at": None,
        "embedding": None,
        "embedding_text_sha256": None,
        "embedding_model_id": None,
    }
    record.update(fields)
    return record


def build(root: Path) -> Path:
    folder = root / NAME
    (folder / "reflection_archive").mkdir(parents=True)
    main = [
        entry(1, "pending", custom_key={"kept": True}),
        entry(2, "confirmed", confirmed_at="2024-05-04T10:00:00", auto_confirmed=True),
        entry(3, "promoted", confirmed_at="2024-05-04T10:00:00", promoted_at="2024-05-10T10:00:00"),
        entry(4, "denied", denied_at="2024-05-11T10:00:00", denied_reason="user_denied", feedback="denied"),
        entry(5, "merged", merged_at="2024-05-12T10:00:00", absorbed_into="persona.master.p_1"),
        entry(
            6,
            "promote_blocked",
            promote_blocked_at="2024-05-13T10:00:00",
            promote_blocked_reason="llm_unavailable",
            promote_attempt_count=5,
        ),
        entry(7, "pending", sub_zero_days=3, sub_zero_last_increment_date="2024-05-20", denied_at=None),
    ]
    shard = [
        entry(8, "archived", archived_at="2024-06-01T03:00:00", archive_shard_path=SHARD, sub_zero_days=14),
        entry(
            9,
            "denied",
            denied_at="2024-04-01T10:00:00",
            archived_at="2024-06-01T03:00:00",
            archive_shard_path=SHARD,
        ),
    ]
    surfaced = [
        {
            "reflection_id": main[0]["id"],
            "text": main[0]["text"],
            "surfaced_at": "2024-05-05T20:00:00",
            "feedback": None,
        },
        {
            "reflection_id": main[3]["id"],
            "text": main[3]["text"],
            "surfaced_at": "2024-05-05T20:00:00",
            "feedback": "denied",
        },
    ]
    (folder / "reflections.json").write_text(json.dumps(main, ensure_ascii=False), encoding="utf-8")
    (folder / "reflection_archive" / SHARD).write_text(
        json.dumps(shard, ensure_ascii=False), encoding="utf-8"
    )
    (folder / "surfaced.json").write_text(json.dumps(surfaced, ensure_ascii=False), encoding="utf-8")
    return root


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_every_status_round_trips_unchanged(tmp_path: Path):
    source = build(tmp_path / "in")
    call_command("import_memory", str(source))
    assert set(Reflection.objects.values_list("status", flat=True)) == set(Reflection.Status.values)
    assert ArchiveShard.objects.get().size == 2

    out = tmp_path / "out"
    call_command("export_memory", str(out), "--character", NAME)
    for name in ("reflections.json", f"reflection_archive/{SHARD}", "surfaced.json"):
        assert load(out / NAME / name) == load(source / NAME / name), name


def test_import_twice_changes_nothing(tmp_path: Path):
    source = build(tmp_path / "in")
    call_command("import_memory", str(source))
    before = list(Reflection.objects.order_by("pk").values())
    surfaced = list(SurfacedReflection.objects.order_by("pk").values())
    call_command("import_memory", str(source), "--character", NAME)
    assert list(Reflection.objects.order_by("pk").values()) == [
        {**row, "updated_at": after["updated_at"]}
        for row, after in zip(before, Reflection.objects.order_by("pk").values(), strict=True)
    ]
    assert list(SurfacedReflection.objects.order_by("pk").values()) == surfaced


def test_reconcile_replays_a_lost_view_change(client, tmp_path: Path, llm_server):
    """Events written by the services rebuild the view: drop the state change, replay it."""
    source = build(tmp_path / "in")
    call_command("import_memory", str(source))
    reflection = Reflection.objects.get(status="pending", sub_zero_days=3)
    response = client.post(
        f"/api/v1/characters/{NAME}/reflections/{reflection.reflection_id}/confirm/",
        data="{}",
        content_type="application/json",
    )
    assert response.status_code == 200
    from nekomem.journal.models import AppliedSentinel, Event

    event = Event.objects.filter(type="reflection.state_changed").latest("seq")
    Reflection.objects.filter(pk=reflection.pk).update(status="pending", confirmed_at=None)
    AppliedSentinel.objects.filter(character=reflection.character).update(last_applied_seq=event.seq - 1)
    assert events_reconcile(character_id=reflection.character_id).applied == 1
    reflection.refresh_from_db()
    assert reflection.status == "confirmed" and reflection.confirmed_at is not None
