"""The move of the window counter and the review flag from Character to the recent layer keeps them."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("characters", "0003_recent_next_position"), ("recent", "0005_recent_jobs_to_kernel_jobs")]
AFTER = [("characters", "0004_recent_state_moved"), ("recent", "0006_window_state")]


def migrate(targets: list[tuple[str, str]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor


def test_the_counter_and_the_review_flag_keep_their_values() -> None:
    old = migrate(BEFORE).loader.project_state(BEFORE).apps
    Character = old.get_model("characters", "Character")
    mid = Character.objects.create(name="mid-chat", recent_next_position=42, review_clean=True)
    new = Character.objects.create(name="never-chatted")
    try:
        apps = migrate(AFTER).loader.project_state(AFTER).apps
        states = apps.get_model("recent", "RecentWindowState").objects
        assert set(states.values_list("character_id", "next_position", "review_clean")) == {
            (mid.pk, 42, True),
            (new.pk, 0, False),
        }
        # And back: the reverse migration puts the values on the character again.
        apps = migrate(BEFORE).loader.project_state(BEFORE).apps
        restored = apps.get_model("characters", "Character").objects.get(pk=mid.pk)
        assert (restored.recent_next_position, restored.review_clean) == (42, True)
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
