"""``manage.py archive [--character NAME]``: run the archive sweep (reference §3.5.5) now."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nekomem.runtime.commands import command_characters, progress_bar
from nekomem.runtime.state import storage_writer
from persona.services import memory_archive_sweep


class Command(BaseCommand):
    help = (
        "Run the archive sweep of reflections and persona entries now, for every character or one: "
        "each entry below zero counts one more day (at most once a calendar day) and moves into the "
        "archive at 14; promoted and denied reflections older than 30 days are archived."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--character", metavar="NAME", help="only this character")

    def handle(self, *args: Any, **options: Any) -> None:
        characters = command_characters(options.get("character"))
        counted = archived = 0
        with storage_writer() as allowed:
            if not allowed:
                raise CommandError("storage is blocked (a backup or a restore); nothing was swept")
            with progress_bar(total=len(characters), desc="archive sweep", unit="character") as bar:
                for character in characters:
                    report = memory_archive_sweep(character_id=character.pk)
                    moved = report.reflections.archived + report.persona.archived
                    counted += report.reflections.counted + report.persona.counted
                    archived += moved
                    if moved and options["verbosity"] >= 1:
                        self.stdout.write(
                            f"{character.name}: {report.reflections.archived} reflections, "
                            f"{report.persona.archived} persona entries archived"
                        )
                    bar.update(1)
        if options["verbosity"] >= 1:
            self.stdout.write(
                f"{len(characters)} characters swept: {counted} sub-zero days counted, {archived} archived"
            )
