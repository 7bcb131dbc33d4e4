"""``manage.py refine --character NAME [--only …]``: run the refine passes and the schema re-check now."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from nekomem.runtime.commands import command_characters, progress_bar
from nekomem.runtime.state import storage_writer
from persona.services import persona_refine
from reflections.selectors import v1_entries_count
from reflections.services import reflections_refine, schema_recheck_character

STEPS = ("persona", "reflections", "scoped", "recheck")


class Command(BaseCommand):
    help = (
        "Run the refine loops (persona, reflections, group-chat subjects: near-identical entries merged, "
        "split, modified or discarded by the model, at most 3 clusters a pass) and the schema re-check "
        "of v1 reflections and facts now, for one character or every one. Needs an LLM provider; refine "
        "also needs stored vectors and powerful memory on."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--character", metavar="NAME", help="only this character")
        parser.add_argument(
            "--only", choices=STEPS, action="append", help="run only this step (repeatable); default: all"
        )
        parser.add_argument(
            "--recheck-limit",
            type=int,
            default=0,
            metavar="N",
            help="re-judge at most N v1 entries per character (default: until none is left or one waits)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        characters = command_characters(options.get("character"))
        steps = options.get("only") or list(STEPS)
        verbose = options["verbosity"] >= 1
        with storage_writer() as allowed:
            if not allowed:
                raise CommandError("storage is blocked (a backup or a restore); nothing was refined")
            for character in characters:
                if "persona" in steps:
                    self._report(character.name, "persona refine", persona_refine(character_id=character.pk))
                if "reflections" in steps:
                    report = reflections_refine(character_id=character.pk)
                    self._report(character.name, "reflection refine", report)
                if "scoped" in steps:
                    report = persona_refine(character_id=character.pk, scoped=True)
                    self._report(character.name, "scoped persona refine", report)
                    report = reflections_refine(character_id=character.pk, scoped=True)
                    self._report(character.name, "scoped reflection refine", report)
                if "recheck" in steps:
                    self._recheck(character, limit=options["recheck_limit"], verbose=verbose)

    def _report(self, name: str, what: str, report: Any) -> None:
        if self.verbosity >= 1:
            self.stdout.write(
                f"{name}: {what}: {report.clusters} clusters, {report.actions} actions, "
                f"{report.failed} failed, {report.skipped} skipped"
                + (f" ({report.reason})" if report.reason else "")
            )

    def _recheck(self, character: Any, *, limit: int, verbose: bool) -> None:
        total = v1_entries_count(character_id=character.pk)
        if limit:
            total = min(total, limit)
        counts: dict[str, int] = {}
        last = None
        with progress_bar(total=total, desc=f"re-check {character.name}", unit="entry") as bar:
            for _ in range(total):
                last = schema_recheck_character(character_id=character.pk)
                if last.outcome in ("nothing", "waiting"):
                    break
                counts[last.outcome] = counts.get(last.outcome, 0) + 1
                bar.update(1)
        if verbose:
            done = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())) or "nothing re-judged"
            why = f" ({last.reason})" if last is not None and last.reason else ""
            self.stdout.write(f"{character.name}: schema re-check: {done}{why}")

    def execute(self, *args: Any, **options: Any) -> Any:
        self.verbosity = options.get("verbosity", 1)
        return super().execute(*args, **options)
