"""Move the recent layer's jobs onto the kernel's job table, keeping in-flight work.

Pending, waiting and running jobs keep their attempts, lease and run token; a waiting job's free-text
reason becomes the machine-readable ``no_provider:<tier>``, and a pending retry (attempts spent)
waits out its back-off. Finished jobs move too, so the last compression's fate stays known.
"""

from datetime import timedelta

from django.db import migrations

KINDS = {"compress": ("recent.compress", "summary"), "review": ("recent.review", "correction")}
# Old terminal statuses the kernel folds into its five: a truncated review (failed) is dead-lettered
# at once, and a cancelled job is done with outcome "cancelled".
STATUSES = {"failed": "dead", "cancelled": "done"}


def forward(apps, schema_editor):
    RecentJob = apps.get_model("recent", "RecentJob")
    Job = apps.get_model("journal", "Job")
    for old in RecentJob.objects.order_by("pk").iterator():
        kind, tier = KINDS[old.kind]
        status = STATUSES.get(old.status, old.status)
        fields = {
            "character_id": old.character_id,
            "kind": kind,
            "status": status,
            "attempts": old.attempts,
            "last_error": old.last_error,
            "outcome": "cancelled" if old.status == "cancelled" else old.outcome,
            "run_token": old.run_token,
            "lease_until": old.lease_until,
            "finished_at": old.finished_at,
        }
        if old.status == "waiting":
            fields.update(waiting_reason=f"no_provider:{tier}", last_error="")
        elif old.status == "pending" and old.attempts:
            fields.update(
                status="waiting", waiting_reason="backoff", next_attempt_at=old.updated_at + timedelta(minutes=1)
            )
        job = Job.objects.create(**fields)
        # created_at/updated_at are stamped on create; keep the old ones (the sweep's grace reads them).
        Job.objects.filter(pk=job.pk).update(created_at=old.created_at, updated_at=old.updated_at)


class Migration(migrations.Migration):
    dependencies = [
        ("recent", "0004_fk_index_covered"),
        ("journal", "0003_work_mechanism"),
    ]

    operations = [
        migrations.RunPython(forward, migrations.RunPython.noop),
        migrations.DeleteModel(name="RecentJob"),
    ]
