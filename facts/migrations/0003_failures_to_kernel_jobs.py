"""Failure counts of the extraction windows and the arbitration queue become kernel jobs.

A window that has failed (or waits for a provider) becomes a ``facts.extraction`` job (key ``a`` or
``b``) with its attempts, error and reason; a character whose queued pairs have failed arbitration
becomes a ``facts.dedup`` job carrying the most attempts among them.
"""

from datetime import timedelta

from django.db import migrations
from django.db.models import Max
from django.utils import timezone


def forward(apps, schema_editor):
    Job = apps.get_model("journal", "Job")
    ExtractionCursor = apps.get_model("facts", "ExtractionCursor")
    FactDedupPair = apps.get_model("facts", "FactDedupPair")
    due = timezone.now() + timedelta(minutes=1)
    for cursor in ExtractionCursor.objects.all().iterator():
        for key, failures in (("a", cursor.window_failures), ("b", cursor.b_window_failures)):
            if failures:
                Job.objects.create(
                    character_id=cursor.character_id,
                    kind="facts.extraction",
                    key=key,
                    status="waiting",
                    attempts=failures,
                    waiting_reason="backoff",
                    next_attempt_at=due,
                    last_error=cursor.last_error,
                )
        if cursor.waiting_reason and not cursor.window_failures:
            Job.objects.create(
                character_id=cursor.character_id,
                kind="facts.extraction",
                key="a",
                status="waiting",
                waiting_reason="no_provider:summary",
            )
    failed = (
        FactDedupPair.objects.filter(status="pending", attempts__gt=0)
        .values("character_id")
        .annotate(attempts=Max("attempts"))
    )
    for row in failed:
        Job.objects.create(
            character_id=row["character_id"],
            kind="facts.dedup",
            status="waiting",
            attempts=row["attempts"],
            waiting_reason="backoff",
            next_attempt_at=due,
        )


class Migration(migrations.Migration):

    dependencies = [
        ('facts', '0002_dedup_tokens_and_pair_record'),
        ('journal', '0003_work_mechanism'),
    ]

    operations = [
        migrations.RunPython(forward, migrations.RunPython.noop),
        migrations.RemoveField(
            model_name='extractioncursor',
            name='b_window_failures',
        ),
        migrations.RemoveField(
            model_name='extractioncursor',
            name='last_error',
        ),
        migrations.RemoveField(
            model_name='extractioncursor',
            name='waiting_reason',
        ),
        migrations.RemoveField(
            model_name='extractioncursor',
            name='window_failures',
        ),
        migrations.RemoveField(
            model_name='factdeduppair',
            name='attempts',
        ),
    ]
