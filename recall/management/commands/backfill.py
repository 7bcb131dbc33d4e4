"""``manage.py backfill [--character NAME]``: embed every missing vector now (reference §6)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from nekomem.characters.locks import exclusive_work
from nekomem.embeddings import get_embedder
from nekomem.runtime.commands import command_characters, progress_bar
from nekomem.runtime.state import storage_writer
from recall.backfill import BACKFILL_LOCK, embedding_backfill_run


class Command(BaseCommand):
    help = (
        "Embed the missing or stale vectors of every character, or of one, now instead of a minute's "
        "work per schedule tick; the paraphrase pairs of the new facts follow at the next tick."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--character", metavar="NAME", help="only this character")

    def handle(self, *args: Any, **options: Any) -> None:
        characters = command_characters(options.get("character"))
        if not settings.EMBEDDINGS_ENABLED or get_embedder() is None:
            raise CommandError("vectors are disabled (no embedding model, or switched off): nothing to do")
        embedded = raw_turns = 0
        with storage_writer() as allowed, exclusive_work(BACKFILL_LOCK) as held:
            if not allowed:
                raise CommandError("storage is blocked (a backup or a restore); nothing was embedded")
            if not held:
                raise CommandError("a backfill is running already (a worker's tick); try again later")
            with progress_bar(total=None, desc="embedding backfill", unit="vector") as bar:
                for character in characters:
                    report = embedding_backfill_run(character_id=character.pk, on_progress=bar.update)
                    embedded += report.embedded
                    raw_turns += report.raw_turns
                    if report.embedded and options["verbosity"] >= 2:
                        self.stdout.write(f"{character.name}: {report.embedded} vectors")
        if options["verbosity"] >= 1:
            self.stdout.write(
                f"{len(characters)} characters: {embedded} vectors written "
                f"({embedded - raw_turns} facts, {raw_turns} raw turns)"
            )
