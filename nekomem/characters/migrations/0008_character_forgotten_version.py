from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("characters", "0007_character_language_order"),
    ]

    operations = [
        migrations.AddField(
            model_name="character",
            name="forgotten_version",
            field=models.PositiveBigIntegerField(
                default=0,
                help_text="The memory_version of the last deletion (a forgotten row): a saved recall index "
                "older than it may hold the forgotten text and is dropped, never loaded.",
            ),
        ),
    ]
