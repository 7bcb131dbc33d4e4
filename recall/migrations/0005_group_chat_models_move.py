"""Group chat's three models left for ``groupchat`` (its 0001 takes them over in state, same tables):
recall forgets them in state only and drops nothing."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("recall", "0004_raw_turn_window"),
        ("groupchat", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.DeleteModel(name="ScopedWriteKey"),
                migrations.DeleteModel(name="SubjectForgetEpoch"),
                migrations.DeleteModel(name="SubjectRecord"),
            ],
        ),
    ]
