from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nekomem.characters.selectors import character_get
from nekomem.journal.services import events_reconcile


class Command(BaseCommand):
    help = "Replay events after each character's applied sentinel (idempotent; never moves it back)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--character", help="only this character")

    def handle(self, *args: Any, **options: Any) -> None:
        character_id = None
        if options.get("character"):
            character = character_get(name=options["character"])
            if character is None:
                raise CommandError(f"no character named {options['character']!r}")
            character_id = character.pk
        report = events_reconcile(character_id=character_id)
        self.stdout.write(f"applied {report.applied} events")
        for cid, why in report.paused.items():
            self.stdout.write(f"paused character {cid}: {why}")
