from django.core.management.base import BaseCommand

from nekomem.install.folder import install_migration_abandoned_release
from nekomem.journal.jobs import work_restart
from nekomem.journal.services import events_reconcile


class Command(BaseCommand):
    help = "Startup work before the server and cluster start: reconcile events, replay jobs and the outbox."

    def handle(self, *args, **options):
        install_migration_abandoned_release()
        report = events_reconcile()
        restart = work_restart()
        self.stdout.write(
            f"reconciled {report.applied} events; released {restart.released} stale leases; "
            f"requeued {restart.ops} ops and {restart.jobs} jobs"
        )
