"""An original-layout character directory with persona, corrections, archive, settings and reflections."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reflections.services.records import reflection_id_for

SHARD = "2026-10-01_1a2b3c4d.json"


def persona_entry(entry_id: str, text: str, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": entry_id,
        "text": text,
        "source": "reflection",
        "source_id": None,
        "recent_mentions": [],
        "suppress": False,
        "protected": False,
        "reinforcement": 1.7,  # raw: an export must not decay it
        "disputation": 0.2,
        "sub_zero_days": 0,
        "user_fact_reinforce_count": 3,
        "merged_from_ids": [],
        "version_history": [],
        "token_count": None,
        "token_count_text_sha256": None,
        "token_count_tokenizer": None,
        "last_refine_cluster_hash": None,
        "sub_zero_last_increment_date": None,
        "suppressed_at": None,
        "rein_last_signal_at": "2026-11-20T08:00:00.250000",
        "disp_last_signal_at": "2026-11-21T09:00:00",
        "last_refine_at": None,
        "embedding": None,
        "embedding_text_sha256": None,
        "embedding_model_id": None,
    }
    record.update(fields)
    return record


def reflection(n: int, text: str, status: str, **fields: Any) -> dict[str, Any]:
    ids = [f"fact_20261101120000_{n:08x}"]
    record: dict[str, Any] = {
        "id": reflection_id_for(ids),
        "text": text,
        "entity": "master",
        "status": status,
        "source_fact_ids": ids,
        "created_at": "2026-11-25T12:00:00",
        "reinforcement": 1.2,
        "rein_last_signal_at": "2026-11-28T12:00:00",
        "temporal_scope": "pattern",
    }
    record.update(fields)
    return record


def build(root: Path, name: str) -> Path:
    folder = root / name
    (folder / "persona_archive").mkdir(parents=True)
    persona = {
        "master": {
            "facts": [
                persona_entry(
                    "card_0f1e2d3c",
                    "昵称: 阿凛",
                    source="character_card",
                    protected=True,
                    reinforcement=0.0,
                    disputation=0.0,
                ),
                persona_entry(
                    "prom_ref_aaaa",
                    "主人喜欢喝冰美式",
                    version_history=[
                        {
                            "text": "主人喜欢咖啡",
                            "replaced_at": "2026-11-01T10:00:00",
                            "reason": "promote_merge",
                            "source_fact_id": None,
                        }
                    ],
                    merged_from_ids=["ref_bbbb"],
                ),
                persona_entry(
                    "manual_20261120080000_1234abcd",
                    "主人养了一只叫团子的猫",
                    source="manual",
                    suppress=True,
                    suppressed_at="2999-01-01T00:00:00",
                    recent_mentions=["2026-11-30T10:00:00", "2026-11-30T11:00:00", "2026-11-30T12:00:00"],
                ),
            ]
        },
        "neko": {"facts": [persona_entry("legacy_9a8b7c6d", "口头禅: 喵", source="settings")]},
        "relationship": {
            "facts": [
                persona_entry("corr_20261121000000_55667788", "两人每周一起看电影", source="correction")
            ]
        },
        "__meta__": {
            "facts": [
                {"id": "__evidence_migration_v1__", "protected": True, "migrated_at": "2026-01-01T00:00:00"}
            ]
        },
    }
    corrections = [
        {
            "old_text": "主人喜欢喝冰美式",
            "new_text": "主人冬天改喝热拿铁",
            "entity": "master",
            "created_at": "2026-11-29T10:00:00",
        },
        {
            "old_text": "两人每周一起看电影",
            "new_text": "两人每月看一次电影",
            "entity": "relationship",
            "created_at": "2026-11-29T11:00:00",
            "resolve_attempts": 2,
            "scope": "group:7",
        },
    ]
    archived = [
        persona_entry(
            "manual_20260901000000_0badf00d",
            "主人以前喜欢集邮",
            entity="master",
            sub_zero_days=14,
            archived_at="2026-10-01T03:00:00",
            archive_shard_path=SHARD,
        )
    ]
    reflections = [
        reflection(1, "主人最近似乎在准备考试", "pending"),
        reflection(2, "主人晚上经常熬夜", "confirmed", confirmed_at="2026-11-27T12:00:00"),
        reflection(
            3,
            "主人那阵子在搬家",
            "confirmed",
            temporal_scope="past",
            event_start_at="2026-11-10T12:00:00",
            confirmed_at="2026-11-12T12:00:00",
        ),
    ]
    files = {
        "persona.json": persona,
        "persona_corrections.json": corrections,
        f"persona_archive/{SHARD}": archived,
        "settings.json": {"neko": {"口头禅": "喵"}},
        "reflections.json": reflections,
    }
    for relative, value in files.items():
        (folder / relative).write_text(json.dumps(value, ensure_ascii=False, indent=2), encoding="utf-8")
    return root


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
