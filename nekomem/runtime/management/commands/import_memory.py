"""``import_memory ROOT [--character NAME [--as NEW_NAME]]``: bring original-layout directories in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nekomem.characters.names import InvalidCharacterName
from nekomem.portability import (
    ImportRefused,
    ImportSource,
    memory_import,
    memory_import_root,
    memory_sources,
    progress_bars,
)


class Command(BaseCommand):
    verbosity = 1

    def _say(self, line: str) -> None:
        if self.verbosity >= 1:
            self.stdout.write(line)

    help = (
        "Import ROOT/<name>/ directories in the original N.E.K.O. layout: all of them or none (a malformed "
        "file is named and nothing is written); importing the same directory again changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("root", type=Path)
        parser.add_argument("--character", help="only ROOT/<NAME>/")
        parser.add_argument(
            "--as", dest="as_name", metavar="NEW_NAME", help="import ROOT/<NAME>/ as the character NEW_NAME"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        self.verbosity = options["verbosity"]
        root: Path = options["root"]
        if not root.is_dir():
            raise CommandError(f"{root} is not a directory")
        only, as_name = options.get("character"), options.get("as_name")
        if as_name and not only:
            raise CommandError("--as needs --character: which directory to import under the new name")
        sources = [ImportSource(name=as_name or only, folder=root / only)] if only else memory_sources(root)
        try:
            with progress_bars():
                reports = memory_import(sources=sources)
        except InvalidCharacterName as exc:
            raise CommandError(f"refused: {exc}") from exc
        except ImportRefused as exc:
            raise CommandError("refused, nothing was imported:\n" + "\n".join(exc.problems)) from exc
        for report in reports:
            if report.created:
                self._say(f"{report.name}: new character")
            for written in report.written:
                result = written.result
                self._say(
                    f"{report.name}/{written.filename}: {result.created} new, {result.updated} updated, "
                    f"{result.unchanged} unchanged"
                )
            if not report.written:
                self._say(f"{report.name}: nothing changed")
        if only:
            return
        # The process-wide files at ROOT (speaker_trust.json): all of them or none, after the characters.
        try:
            root_files = memory_import_root(root=root)
        except ImportRefused as exc:
            raise CommandError(
                "refused, no process-wide file was imported:\n" + "\n".join(exc.problems)
            ) from exc
        for written in root_files:
            result = written.result
            self._say(
                f"{written.filename}: {result.created} new, {result.updated} updated, "
                f"{result.unchanged} unchanged"
            )
