"""``import_memory ROOT [--character NAME]``: bring original-layout memory directories in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nekomem.characters.services import character_get_or_create, character_memory_changed
from nekomem.portability import MalformedFile, file_handlers


class Command(BaseCommand):
    help = "Import ROOT/<name>/ directories in the original N.E.K.O. layout (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("root", type=Path)
        parser.add_argument("--character", help="only ROOT/<NAME>/")

    def handle(self, *args: Any, **options: Any) -> None:
        root: Path = options["root"]
        if not root.is_dir():
            raise CommandError(f"{root} is not a directory")
        only = options.get("character")
        folders = [root / only] if only else sorted(p for p in root.iterdir() if p.is_dir())
        failures = [msg for folder in folders for msg in self._import_folder(folder)]
        if failures:
            raise CommandError("refused:\n" + "\n".join(failures))

    def _import_folder(self, folder: Path) -> list[str]:
        if not folder.is_dir():
            return [f"{folder}: no such character directory"]
        character = character_get_or_create(name=folder.name)
        failures = []
        for handler in file_handlers():
            path = folder / handler.filename
            if not path.exists():
                continue
            try:
                result = handler.importer(character, path)
            except MalformedFile as exc:
                failures.append(str(exc))
                self.stderr.write(f"refused {exc} (nothing imported from this file)")
                continue
            self.stdout.write(
                f"{folder.name}/{handler.filename}: {result.created} new, {result.updated} updated, "
                f"{result.unchanged} unchanged"
            )
        # Recall caches key on the version; an import is a change like any other.
        character_memory_changed(character_id=character.pk)
        return failures
