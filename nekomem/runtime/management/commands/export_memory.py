"""``export_memory ROOT [--character NAME]``: write ROOT/<name>/ in the original layout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nekomem.characters.models import Character
from nekomem.portability import memory_export, memory_export_root, progress, progress_bars


class Command(BaseCommand):
    verbosity = 1

    def _say(self, line: str) -> None:
        if self.verbosity >= 1:
            self.stdout.write(line)

    help = (
        "Export every character (or one) to ROOT/<name>/ in the original N.E.K.O. file shapes, and the "
        "process-wide files (speaker_trust.json) to ROOT/ when exporting them all."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("root", type=Path)
        parser.add_argument("--character", help="only this character")

    def handle(self, *args: Any, **options: Any) -> None:
        self.verbosity = options["verbosity"]
        root: Path = options["root"]
        characters = Character.objects.order_by("name")
        if options.get("character"):
            characters = characters.filter(name=options["character"])
            if not characters.exists():
                raise CommandError(f"no character named {options['character']!r}")
        with progress_bars():
            for character in progress(characters, total=characters.count(), desc="characters"):
                for written in memory_export(character=character, folder=root / character.name):
                    self._say(f"{character.name}/{written.filename}: {written.entries} entries")
        if not options.get("character"):
            # The process-wide files (speaker_trust.json) belong to no character: a whole export only.
            for written in memory_export_root(root=root):
                self._say(f"{written.filename}: {written.entries} entries")
