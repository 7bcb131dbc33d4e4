from django.core.management.base import BaseCommand

from nekomem.runtime.services import schedules_upsert


class Command(BaseCommand):
    help = "Upsert the django-q2 maintenance schedules declared in code."

    def handle(self, *args, **options):
        names = schedules_upsert()
        self.stdout.write(f"{len(names)} schedules: {', '.join(names)}")
