import django.db.models.deletion
from django.db import migrations, models


def copy_from_characters(apps, schema_editor):
    Character = apps.get_model("characters", "Character")
    RecentWindowState = apps.get_model("recent", "RecentWindowState")
    RecentWindowState.objects.bulk_create(
        RecentWindowState(character_id=pk, next_position=next_position, review_clean=review_clean)
        for pk, next_position, review_clean in Character.objects.values_list(
            "pk", "recent_next_position", "review_clean"
        ).iterator()
    )


def copy_to_characters(apps, schema_editor):
    Character = apps.get_model("characters", "Character")
    RecentWindowState = apps.get_model("recent", "RecentWindowState")
    for state in RecentWindowState.objects.iterator():
        Character.objects.filter(pk=state.character_id).update(
            recent_next_position=state.next_position, review_clean=state.review_clean
        )


class Migration(migrations.Migration):
    """``Character.recent_next_position`` and ``review_clean`` move here, values kept
    (``characters.0004`` then drops the old columns)."""

    dependencies = [
        ("characters", "0003_recent_next_position"),
        ("recent", "0005_recent_jobs_to_kernel_jobs"),
    ]

    operations = [
        migrations.CreateModel(
            name="RecentWindowState",
            fields=[
                (
                    "character",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="recent_window_state",
                        serialize=False,
                        to="characters.character",
                    ),
                ),
                (
                    "next_position",
                    models.BigIntegerField(
                        default=0,
                        help_text="Next free position in the recent window. Appends take positions from it in "
                        "the database under the character's row lock, so positions only ever grow and never "
                        "need a read of the window.",
                    ),
                ),
                (
                    "review_clean",
                    models.BooleanField(
                        default=False,
                        help_text="Set by a finished history review; any new human message clears it.",
                    ),
                ),
            ],
        ),
        migrations.RunPython(copy_from_characters, copy_to_characters),
    ]
