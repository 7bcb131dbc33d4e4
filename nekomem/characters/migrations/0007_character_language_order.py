from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("characters", "0006_raw_rows_written"),
    ]

    operations = [
        migrations.AlterField(
            model_name="character",
            name="language",
            field=models.CharField(
                blank=True,
                help_text="The character's durable prompt locale: the last explicit supported language a "
                "request or the language page chose (reference §1.7). Empty: none chosen yet.",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="character",
            name="language_order",
            field=models.BigIntegerField(
                default=0,
                help_text="Arrival stamp of the choice stored in ``language``; a choice is stored only over "
                "an older stamp, compared in the database, so a request that arrived earlier and finishes "
                "late never overrides a newer choice.",
            ),
        ),
    ]
