"""Report half-written turns and orphan outbox ops (see ``recent.selectors.turn_store_problems``)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from recent.selectors import turn_store_problems


class Command(BaseCommand):
    help = "Check that every stored turn is whole: raw log, window and post-turn op agree."

    def handle(self, *args, **options):
        problems = turn_store_problems()
        for problem in problems:
            self.stderr.write(problem)
        if problems:
            raise CommandError(f"{len(problems)} problems in the turn store")
        self.stdout.write("turn store is sound")
