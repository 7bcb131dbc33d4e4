"""Group chat's three models left recall in state only (0001), but a database migrated before the move
kept their ``django_content_type`` rows under ``recall``: admin permissions and ``LogEntry`` rows
pointed at models that no longer exist there, and the next ``migrate`` added ``groupchat`` twins.

Forward, each old row is renamed to ``groupchat`` when no ``groupchat`` row exists yet (its
permissions and log entries follow, as they hang on the row's id). When the twin exists already,
what pointed at the old row moves to the twin: log entries, and the grants of each permission to
users and groups (onto the twin's permission of the same codename, or the permission itself moves
when the twin has none); then the stale row goes. Backward does the same from ``groupchat`` to
``recall``."""

from django.conf import settings
from django.db import migrations

MODELS = ("scopedwritekey", "subjectforgetepoch", "subjectrecord")


def _permission_move(apps, db: str, permission, target) -> None:
    """``permission``'s grants onto ``target``'s permission of the same codename (or the permission
    itself onto ``target`` when it has none)."""
    Permission = apps.get_model("auth", "Permission")
    twin = Permission.objects.using(db).filter(content_type=target, codename=permission.codename).first()
    if twin is None:
        permission.content_type = target
        permission.save(using=db, update_fields=["content_type"])
        return
    Group = apps.get_model("auth", "Group")
    User = apps.get_model(settings.AUTH_USER_MODEL)
    for group in Group.objects.using(db).filter(permissions=permission):
        group.permissions.add(twin)
    for user in User.objects.using(db).filter(user_permissions=permission):
        user.user_permissions.add(twin)
    permission.delete(using=db)


def _content_types_move(apps, schema_editor, source: str, target: str) -> None:
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    LogEntry = apps.get_model("admin", "LogEntry")
    db = schema_editor.connection.alias
    for model in MODELS:
        old = ContentType.objects.using(db).filter(app_label=source, model=model).first()
        if old is None:
            continue
        twin = ContentType.objects.using(db).filter(app_label=target, model=model).first()
        if twin is None:
            old.app_label = target
            old.save(using=db, update_fields=["app_label"])
            continue
        LogEntry.objects.using(db).filter(content_type=old).update(content_type=twin)
        for permission in Permission.objects.using(db).filter(content_type=old):
            _permission_move(apps, db, permission, twin)
        old.delete(using=db)


def content_types_to_groupchat(apps, schema_editor) -> None:
    _content_types_move(apps, schema_editor, "recall", "groupchat")


def content_types_to_recall(apps, schema_editor) -> None:
    _content_types_move(apps, schema_editor, "groupchat", "recall")


class Migration(migrations.Migration):
    dependencies = [
        ("groupchat", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("admin", "0003_logentry_add_action_flag_choices"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [migrations.RunPython(content_types_to_groupchat, content_types_to_recall)]
