"""Group chat's models moved out of recall in state only: a database migrated before the move goes forward
with its tables untouched and its rows readable through ``groupchat.models``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import Group, Permission, User
from django.contrib.contenttypes.models import ContentType
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


MODELS = ("scopedwritekey", "subjectforgetepoch", "subjectrecord")


def _content_types(app_label: str) -> dict[str, int]:
    ContentType.objects.clear_cache()
    rows = ContentType.objects.filter(app_label=app_label, model__in=MODELS)
    return dict(rows.values_list("model", "pk"))


@pytest.mark.django_db(transaction=True)
def test_the_content_types_of_a_database_from_before_the_move_are_renamed_to_groupchat(
    executor: MigrationExecutor,
) -> None:
    executor.migrate(BEFORE_THE_MOVE)
    # What post_migrate left in a database migrated before the move: recall's rows, no groupchat twin.
    ContentType.objects.filter(app_label="groupchat", model__in=MODELS).delete()
    old = {model: ContentType.objects.get_or_create(app_label="recall", model=model)[0] for model in MODELS}
    change = Permission.objects.get_or_create(
        content_type=old["subjectrecord"], codename="change_subjectrecord", defaults={"name": "Can change"}
    )[0]
    editors = Group.objects.create(name="editors")
    editors.permissions.add(change)
    admin = User.objects.create(username="admin")
    entry = LogEntry.objects.create(
        user=admin, content_type=old["subjectrecord"], object_id="1", object_repr="小明", action_flag=CHANGE
    )

    forward = MigrationExecutor(connection)
    forward.migrate(forward.loader.graph.leaf_nodes())

    assert _content_types("recall") == {}
    assert _content_types("groupchat") == {model: row.pk for model, row in old.items()}
    entry.refresh_from_db()
    assert entry.content_type is not None and entry.content_type.model_class() is SubjectRecord
    assert list(editors.permissions.values_list("content_type__app_label", "codename")) == [
        ("groupchat", "change_subjectrecord")
    ]

    executor_back = MigrationExecutor(connection)
    executor_back.migrate([("groupchat", "0001_initial")])
    assert _content_types("recall") == {model: row.pk for model, row in old.items()}
    assert _content_types("groupchat") == {}


@pytest.mark.django_db(transaction=True)
def test_a_stale_recall_content_type_beside_its_groupchat_twin_hands_over_and_goes(
    executor: MigrationExecutor,
) -> None:
    executor.migrate([("groupchat", "0001_initial")])  # backward: groupchat's rows become recall's again
    stale = {model: ContentType.objects.get_or_create(app_label="recall", model=model)[0] for model in MODELS}
    twins = {model: ContentType.objects.create(app_label="groupchat", model=model) for model in MODELS}
    stale_change = Permission.objects.get_or_create(
        content_type=stale["subjectrecord"], codename="change_subjectrecord", defaults={"name": "Can change"}
    )[0]
    twin_change = Permission.objects.get_or_create(
        content_type=twins["subjectrecord"], codename="change_subjectrecord", defaults={"name": "Can change"}
    )[0]
    Permission.objects.filter(content_type=twins["subjectrecord"], codename="view_subjectrecord").delete()
    stale_view = Permission.objects.get_or_create(
        content_type=stale["subjectrecord"], codename="view_subjectrecord", defaults={"name": "Can view"}
    )[0]
    editors = Group.objects.create(name="editors")
    editors.permissions.add(stale_change)
    reader = User.objects.create(username="reader")
    reader.user_permissions.add(stale_view)
    entry = LogEntry.objects.create(
        user=reader,
        content_type=stale["subjectrecord"],
        object_id="1",
        object_repr="小明",
        action_flag=CHANGE,
    )

    forward = MigrationExecutor(connection)
    forward.migrate(forward.loader.graph.leaf_nodes())

    assert _content_types("recall") == {}
    assert _content_types("groupchat") == {model: row.pk for model, row in twins.items()}
    entry.refresh_from_db()
    assert entry.content_type_id == twins["subjectrecord"].pk
    assert list(editors.permissions.values_list("pk", flat=True)) == [twin_change.pk]
    # The twin had no view permission: the stale one moved onto it, the user's grant with it.
    assert list(reader.user_permissions.values_list("pk", "content_type_id")) == [
        (stale_view.pk, twins["subjectrecord"].pk)
    ]
