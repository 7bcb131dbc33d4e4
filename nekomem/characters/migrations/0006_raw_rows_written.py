from django.db import migrations, models
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce


def count_existing_rows(apps, schema_editor) -> None:
    # The count starts at what the raw log already holds, so it means "rows written" from the start.
    Character = apps.get_model("characters", "Character")
    RawMessage = apps.get_model("recent", "RawMessage")
    rows = (
        RawMessage.objects.filter(character_id=OuterRef("pk"))
        .order_by()
        .values("character_id")
        .annotate(rows=Count("id"))
        .values("rows")
    )
    Character.objects.update(raw_rows_written=Coalesce(Subquery(rows[:1]), 0))


class Migration(migrations.Migration):
    dependencies = [
        ("characters", "0005_memory_change"),
        ("recent", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="character",
            name="raw_rows_written",
            field=models.PositiveBigIntegerField(
                default=0,
                help_text="Raw-log rows ever written for this character, counted in the transaction that "
                "writes them: a recall cache that has read as many has every raw turn.",
            ),
        ),
        migrations.RunPython(count_existing_rows, migrations.RunPython.noop, elidable=True),
    ]
