from django.db import migrations


class Migration(migrations.Migration):
    """The window counter and the review flag now live in the recent layer (``RecentWindowState``),
    which copied them first."""

    dependencies = [
        ("characters", "0003_recent_next_position"),
        ("recent", "0006_window_state"),
    ]

    operations = [
        migrations.RemoveField(model_name="character", name="recent_next_position"),
        migrations.RemoveField(model_name="character", name="review_clean"),
    ]
