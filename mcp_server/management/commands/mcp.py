"""``manage.py mcp --character NAME``: the MCP server of one character over stdio, for clients that
spawn the server themselves (desktop chat apps, coding agents)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from mcp_server.server import build_server
from nekomem.characters.names import InvalidCharacterName, validate_character_name


class Command(BaseCommand):
    help = "Serve one character's memory as an MCP server on stdin/stdout."

    def add_arguments(self, parser):
        parser.add_argument("--character", required=True, help="the character this server speaks for")

    def handle(self, *args, **options):
        name = options["character"]
        try:
            validate_character_name(name)
        except InvalidCharacterName as exc:
            raise CommandError(str(exc)) from exc
        # stdout carries the protocol; Django's log handlers write to stderr.
        build_server(name, long_lived=True).run("stdio")
