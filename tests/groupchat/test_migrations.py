"""Group chat's models moved out of recall in state only: a database migrated before the move goes forward
with its tables untouched and its rows readable through ``groupchat.models``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from groupchat.models import ScopedWriteKey, SubjectForgetEpoch, SubjectRecord
from nekomem.characters.models import Character

RECALL_BEFORE = ("recall", "0004_raw_turn_window")
BEFORE_THE_MOVE: list[tuple[str, str | None]] = [RECALL_BEFORE, ("groupchat", None)]
TABLES = {"recall_subjectrecord", "recall_subjectforgetepoch", "recall_scopedwritekey"}


def _columns(table: str) -> list[tuple[str, str]]:
    with connection.cursor() as cursor:
        return [
            (column.name, column.type_code)
            for column in connection.introspection.get_table_description(cursor, table)
        ]


def _schema() -> dict[str, object]:
    with connection.cursor() as cursor:
        return {
            table: (_columns(table), sorted(connection.introspection.get_constraints(cursor, table)))
            for table in sorted(TABLES)
        }


@pytest.fixture
def executor() -> Iterator[MigrationExecutor]:
    executor = MigrationExecutor(connection)
    yield executor
    # Leave the database as every other test expects it: fully migrated.
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
def test_a_database_from_before_the_move_migrates_forward_with_its_tables_untouched(
    executor: MigrationExecutor,
) -> None:
    migrated = _schema()
    executor.migrate(BEFORE_THE_MOVE)
    old = MigrationExecutor(connection).loader.project_state([RECALL_BEFORE]).apps
    assert "subjectrecord" in old.all_models["recall"]  # the state from before the move
    now = timezone.now()
    character = Character.objects.create(name="小雪")
    old.get_model("recall", "SubjectRecord").objects.create(
        character_id=character.pk,
        subject_key="participant:qq:1001",
        subject_kind="participant",
        subject_id="qq:1001",
        scope="participant:qq:1001",
        display_name="小明",
        last_write_at=now,
    )
    old.get_model("recall", "SubjectForgetEpoch").objects.create(
        character_id=character.pk, subject_key="participant:qq:1002", epoch=4, generation=1, forgotten_at=now
    )
    old.get_model("recall", "ScopedWriteKey").objects.create(
        character_id=character.pk, key="digest-1", fingerprint="f" * 64, status="done", created_at=now
    )
    before = _schema()

    forward = MigrationExecutor(connection)
    forward.migrate(forward.loader.graph.leaf_nodes())

    assert _schema() == before == migrated
    record = SubjectRecord.objects.get()
    assert (record.character_id, record.subject_key, record.display_name) == (
        character.pk,
        "participant:qq:1001",
        "小明",
    )
    assert SubjectForgetEpoch.objects.get().epoch == 4
    assert ScopedWriteKey.objects.get().status == ScopedWriteKey.Status.DONE
