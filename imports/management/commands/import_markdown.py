"""``manage.py import_markdown PATH --character NAME``: import an OpenClaw or Hermes workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from imports.services.external_import import (
    SOURCE_FORMATS,
    ImportBadInput,
    ImportTooLarge,
    external_markdown_import,
    import_request_parse,
)
from imports.services.markdown_workspace import workspace_read
from nekomem.runtime.state import storage_writer


class Command(BaseCommand):
    help = (
        "Import USER.md, SOUL.md, MEMORY.md and dated daily notes (at most 45 days) from an OpenClaw or "
        "Hermes workspace folder or zip; persona lines are fused by the LLM. Safe to run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="the workspace folder or a zip of it")
        parser.add_argument("--character", required=True, metavar="NAME")
        parser.add_argument("--format", choices=SOURCE_FORMATS, default="openclaw", dest="source_format")
        parser.add_argument("--language", default=None, help="the language of the fusion prompt")

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"])
        if not path.exists():
            raise CommandError(f"{path} does not exist")
        try:
            ws = workspace_read(path=path, source_format=options["source_format"])
            self.stdout.write(f"read {len(ws.imported_files)} files: {len(ws.candidates)} lines to import")
            for warning in ws.warnings:
                self.stdout.write(self.style.WARNING(f"warning: {warning}"))
            request = import_request_parse(
                body={
                    "character_name": options["character"],
                    "source_format": ws.source_format,
                    "imported_files": ws.imported_files,
                    "candidates": ws.candidates,
                    "warning_count": len(ws.warnings),
                    "language": options["language"],
                }
            )
            self.stdout.write("importing facts, then fusing persona lines (one LLM call per entity)…")
            with storage_writer() as allowed:
                if not allowed:
                    raise CommandError("storage is blocked (a backup or a restore); nothing was imported")
                report = external_markdown_import(request=request)
        except (ImportBadInput, ImportTooLarge, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        summary = (
            f"added {report.added_persona} persona statements and {report.added_facts} facts; "
            f"{report.skipped_duplicates} already there"
        )
        if report.partial:
            raise CommandError(
                f"{summary}; the LLM could not fuse {', '.join(report.failed_entities)}: run the same import "
                "again, nothing is added twice"
            )
        self.stdout.write(self.style.SUCCESS(summary))
