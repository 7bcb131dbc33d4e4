from django.db import migrations
from django.db.models import Max


def next_positions_from_windows(apps, schema_editor):
    Character = apps.get_model("characters", "Character")
    RecentMessage = apps.get_model("recent", "RecentMessage")
    tops = RecentMessage.objects.values("character_id").annotate(top=Max("position"))
    for row in tops:
        Character.objects.filter(pk=row["character_id"]).update(recent_next_position=row["top"] + 1)


class Migration(migrations.Migration):
    dependencies = [
        ("characters", "0003_recent_next_position"),
        ("recent", "0002_review_state_and_jobs"),
    ]

    operations = [migrations.RunPython(next_positions_from_windows, migrations.RunPython.noop)]
