"""``export_memory ROOT [--character NAME]``: write ROOT/<name>/ in the original layout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nekomem.characters.models import Character
from nekomem.portability import file_handlers


class Command(BaseCommand):
    help = "Export every character (or one) to ROOT/<name>/ in the original N.E.K.O. file shapes."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("root", type=Path)
        parser.add_argument("--character", help="only this character")

    def handle(self, *args: Any, **options: Any) -> None:
        root: Path = options["root"]
        characters = Character.objects.order_by("name")
        if options.get("character"):
            characters = characters.filter(name=options["character"])
            if not characters.exists():
                raise CommandError(f"no character named {options['character']!r}")
        for character in characters:
            folder = root / character.name
            folder.mkdir(parents=True, exist_ok=True)
            for handler in file_handlers():
                written = handler.exporter(character, folder / handler.filename)
                self.stdout.write(f"{character.name}/{handler.filename}: {written} entries")
