from django.core.management.base import BaseCommand

from nekomem.journal.services import events_reconcile
from nekomem.journal.sweep import work_restart
from nekomem.runtime.startup import server_hooks


class Command(BaseCommand):
    help = "Startup work before the server and cluster start: reconcile events, replay jobs and the outbox."

    def handle(self, *args, **options):
        for hook in server_hooks():
            if hook.prestart is not None:
                hook.prestart()
        report = events_reconcile()
        restart = work_restart()
        self.stdout.write(
            f"reconciled {report.applied} events; released {restart.released} stale leases; "
            f"requeued {restart.ops} ops and {restart.jobs} jobs"
        )
