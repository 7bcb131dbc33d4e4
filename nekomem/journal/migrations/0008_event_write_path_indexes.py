# The write path of a version (issue 49): two indexes every event insert paid for and no read needs.

import django.db.models.deletion
from django.db import migrations, models

# Django's name for the ForeignKey's own index, the same on SQLite and PostgreSQL.
CHARACTER_INDEX = "journal_event_character_id_a16dcb15"


class Migration(migrations.Migration):

    dependencies = [
        ('characters', '0009_character_release'),
        ('journal', '0007_event_cause_and_versions'),
    ]

    operations = [
        # The timeline reads newest first by seq, on the (character, seq) index.
        migrations.RemoveIndex(
            model_name='event',
            name='event_version_timeline',
        ),
        # Covered by (character, seq). Dropped by name rather than by AlterField, which on SQLite would
        # copy the whole journal into a new table to change no column.
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='event',
                    name='character',
                    field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='events', to='characters.character'),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{CHARACTER_INDEX}"',
                    reverse_sql=f'CREATE INDEX "{CHARACTER_INDEX}" ON "journal_event" ("character_id")',
                ),
            ],
        ),
    ]
