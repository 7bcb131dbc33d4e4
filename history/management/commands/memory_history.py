"""``manage.py memory_history --character NAME (--as-of T | --rollback T | --baseline)``: a character's
memory as it stood at a time, rolling it back to that time, or giving rows from before history a first
version (issue 49)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from history.selectors import layer_as_of
from history.services import history_baseline, memory_rollback
from nekomem.journal.causes import change_cause
from nekomem.journal.registry import history_layer, history_layers
from nekomem.runtime.commands import command_characters, progress_bar
from nekomem.runtime.state import storage_writer
from nekomem.timestamps import parse_iso


def _time(value: str) -> datetime:
    try:
        parsed = parse_iso(value)
    except ValueError:
        parsed = None
    if parsed is None:
        raise CommandError(f"not an ISO time: {value!r}")
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed)


class Command(BaseCommand):
    help = (
        "Read a character's memory as it stood at a time (--as-of, one JSON object a row on stdout), "
        "roll every memory layer back to a time (--rollback; the raw log is untouched, and a later "
        "rollback to a time after this one takes it back), or give every row without a version one "
        "(--baseline), so that an undo of its first recorded change can put back what came before."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--character", metavar="NAME", help="only this character (required for --as-of)")
        action = parser.add_mutually_exclusive_group(required=True)
        action.add_argument("--as-of", metavar="TIME", help="print the rows as they stood at this ISO time")
        action.add_argument("--rollback", metavar="TIME", help="return every memory layer to this ISO time")
        action.add_argument("--baseline", action="store_true", help="version rows that have no version")
        parser.add_argument("--layer", help="with --as-of: only this layer (facts, reflections, persona)")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["as_of"]:
            self._as_of(options)
            return
        characters = command_characters(options.get("character"))
        with storage_writer() as allowed:
            if not allowed:
                raise CommandError("storage is blocked (a backup or a restore); nothing was changed")
            with change_cause("command"):
                if options["baseline"]:
                    self._baseline(characters, options)
                else:
                    self._rollback(characters, _time(options["rollback"]), options)

    def _as_of(self, options: dict[str, Any]) -> None:
        if not options.get("character"):
            raise CommandError("--as-of needs --character")
        (character,) = command_characters(options["character"])
        at = _time(options["as_of"])
        layers = history_layers()
        if options.get("layer"):
            chosen = history_layer(options["layer"])
            if chosen is None:
                raise CommandError(f"no memory layer {options['layer']!r}")
            layers = [chosen]
        for layer in layers:
            for row_id, fields in layer_as_of(character_id=character.pk, layer=layer, at=at).items():
                self.stdout.write(
                    json.dumps({"layer": layer.name, "id": row_id, **fields}, ensure_ascii=False)
                )

    def _baseline(self, characters: list[Any], options: dict[str, Any]) -> None:
        written = 0
        with progress_bar(total=len(characters), desc="baseline", unit="character") as bar:
            for character in characters:
                written += history_baseline(character_id=character.pk)
                bar.update(1)
        if options["verbosity"] >= 1:
            self.stdout.write(f"{len(characters)} characters: {written} rows given a first version")

    def _rollback(self, characters: list[Any], at: datetime, options: dict[str, Any]) -> None:
        for character in characters:
            with progress_bar(total=None, desc=f"rollback {character.name}", unit="row") as bar:

                def advance(layer: str, done: int, total: int) -> None:
                    bar.set_postfix_str(layer)
                    bar.update(1)

                report = memory_rollback(character_id=character.pk, at=at, progress=advance)
            if options["verbosity"] >= 1:
                self.stdout.write(
                    f"{character.name}: {report.restored} rows restored, {report.archived} archived, "
                    f"{report.forgotten} forgotten left as they are (undo: {report.source})"
                )
