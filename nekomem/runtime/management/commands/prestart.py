from django.core.management.base import BaseCommand

from nekomem.journal.services import events_reconcile, outbox_ops_release_leases, outbox_ops_requeue


class Command(BaseCommand):
    help = "Startup work before the server and cluster start: reconcile events, replay the outbox."

    def handle(self, *args, **options):
        report = events_reconcile()
        released = outbox_ops_release_leases()
        requeued = outbox_ops_requeue()
        self.stdout.write(
            f"reconciled {report.applied} events; released {released} stale leases; requeued {requeued} ops"
        )
