"""Migration 0006 starts each character's raw-log row count at the rows its raw log already holds."""

from __future__ import annotations

import pytest
from django.utils import timezone

from nekomem.characters.models import Character
from tests.support.migrations import migrate, schema_at

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("characters", "0005_memory_change")]
AFTER = [("characters", "0006_raw_rows_written")]


def test_the_count_starts_at_the_rows_already_written() -> None:
    with schema_at(BEFORE) as apps:
        old_character = apps.get_model("characters", "Character")
        old_raw = apps.get_model("recent", "RawMessage")
        mel, kai, _ann = (old_character.objects.create(name=name) for name in ("Mel", "Kai", "Ann"))
        now = timezone.now()
        for character, rows in ((mel, 3), (kai, 1)):
            old_raw.objects.bulk_create(
                old_raw(character=character, session_id="s", message="{}", timestamp=now) for _ in range(rows)
            )
        migrate(AFTER)
        counts = dict(Character.objects.values_list("name", "raw_rows_written"))
    assert counts == {"Mel": 3, "Kai": 1, "Ann": 0}
