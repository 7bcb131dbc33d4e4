"""Recall's retention (issue 35): vectors of archived facts and saved indexes of removed characters go."""

from __future__ import annotations

import os
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from facts.models import Fact
from facts.services import fact_archive, fact_restore
from nekomem.characters.models import Character
from nekomem.runtime.schedules import registered_schedules
from recall.backfill import embedding_backfill
from recall.services import recall_retention
from recall.snapshots import snapshot_path
from recall.tasks import recall_retention_tick
from tests.characters.factories import CharacterFactory
from tests.recall.support import fact_entry, import_facts, require_muse

pytestmark = pytest.mark.django_db


@pytest.fixture
def character(tmp_path: Path) -> Character:
    require_muse()
    now = timezone.now()
    texts = ["主人喜欢喝绿茶", "主人在学钢琴", "Master adopted a cat named Mochi"]
    import_facts(tmp_path, "小满", [fact_entry(t, now - timedelta(days=i)) for i, t in enumerate(texts)])
    return Character.objects.get(name="小满")


def test_an_archived_facts_vector_is_dropped_and_not_embedded_again(character):
    assert embedding_backfill(character_id=character.pk).embedded == 3
    fact = Fact.objects.filter(character=character).order_by("pk").first()
    assert fact is not None
    fact_archive(character_id=character.pk, fact_id=fact.fact_id)
    report = recall_retention()
    assert report.fact_vectors == 1
    fact.refresh_from_db()
    assert fact.embedding == "" and fact.embedding_model_id == ""
    assert Fact.objects.filter(character=character).exclude(embedding="").count() == 2
    # The backfill leaves the archived fact alone; once restored, it is embedded again.
    assert embedding_backfill(character_id=character.pk).embedded == 0
    assert recall_retention().fact_vectors == 0
    fact_restore(character_id=character.pk, fact_id=fact.fact_id)
    assert embedding_backfill(character_id=character.pk).embedded == 1


def touch(path: Path, *, age_seconds: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"saved index")
    when = time.time() - age_seconds
    os.utime(path, (when, when))
    return path


def test_saved_indexes_of_removed_characters_and_superseded_ones_go(settings, tmp_path):
    settings.RECALL_SNAPSHOT_DIR = str(tmp_path / "snapshots")
    kept = CharacterFactory.create(name="小满")
    removed = CharacterFactory.create(name="小雪")

    def saved(character: Character, model: str) -> Path:
        path = snapshot_path(
            character_id=character.pk,
            incarnation=character.created_at.isoformat(),
            model_id=model,
            stop_names=(),
        )
        assert path is not None
        return path

    current = touch(saved(kept, "model-b"), age_seconds=3 * 86400)
    superseded = touch(saved(kept, "model-a"), age_seconds=4 * 86400)
    fresh_other = touch(saved(kept, "model-c").with_name(f"{kept.pk}-fresh.pickle"), age_seconds=60)
    orphan = touch(saved(removed, "model-b"), age_seconds=60)
    stray = touch(current.with_name(current.name + "abc.tmp"), age_seconds=2 * 3600)
    writing = touch(current.with_name(current.name + "def.tmp"), age_seconds=10)
    foreign = touch(current.with_name("notes.txt"), age_seconds=10 * 86400)
    removed.delete()
    # Gone: the removed character's, the stray temporary, and both of 小满's older than a day that its
    # newest (a minute old) supersedes. Kept: the newest, a save in progress, and what is not ours.
    assert recall_retention().snapshots == 4
    assert {p.name for p in current.parent.iterdir()} == {fresh_other.name, writing.name, foreign.name}
    assert not orphan.exists() and not stray.exists() and not superseded.exists() and not current.exists()


def test_recall_retention_runs_daily_from_its_schedule(settings, tmp_path):
    settings.RECALL_SNAPSHOT_DIR = str(tmp_path / "snapshots")
    spec = {s.name: s for s in registered_schedules()}["recall-retention"]
    assert spec.func == "recall.tasks.recall_retention_tick" and spec.minutes == 24 * 60
    assert recall_retention_tick() == {"fact_vectors": 0, "snapshots": 0}
