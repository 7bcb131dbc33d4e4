"""``nekomem_character.json``: what nekomem knows of a character beyond its memory files.

The original keeps the character's language and its master's name outside the memory directory (in
its main server's configuration), so an export would lose them; this file of ours carries them and the
character card. The original ignores files it does not know.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nekomem.characters.models import Character
from nekomem.portability import (
    FileHandler,
    ImportResult,
    MalformedFile,
    read_json,
    register_file_handler,
    write_json,
)

CHARACTER_FILE = "nekomem_character.json"
FORMAT = 1
_LENGTHS = {"language": 16, "master_name": 64}  # Character's column widths
FIELDS = ("language", "language_order", "master_name", "master_nicknames", "card")


def read_character(path: Path) -> dict[str, Any]:
    data = read_json(path)
    if not isinstance(data, dict):
        raise MalformedFile(path, f"expected a JSON object, got {type(data).__name__}")
    if data.get("format", FORMAT) != FORMAT:
        raise MalformedFile(path, f"unknown format {data.get('format')!r} (this nekomem reads {FORMAT})")
    fields: dict[str, Any] = {}
    for key, limit in _LENGTHS.items():
        value = data.get(key, "")
        if not isinstance(value, str) or len(value) > limit:
            raise MalformedFile(path, f"must be a string of at most {limit} characters", entry=key)
        fields[key] = value
    nicknames = data.get("master_nicknames", [])
    if not isinstance(nicknames, list) or not all(isinstance(n, str) for n in nicknames):
        raise MalformedFile(path, "must be a list of strings", entry="master_nicknames")
    order = data.get("language_order", 0)
    if not isinstance(order, int) or isinstance(order, bool) or order < 0:
        raise MalformedFile(path, "must be a non-negative integer", entry="language_order")
    card = data.get("card", {})
    if not isinstance(card, dict) or not all(isinstance(v, dict) for v in card.values()):
        raise MalformedFile(path, "must be an object of entity → {field: value}", entry="card")
    return {**fields, "language_order": order, "master_nicknames": nicknames, "card": card}


def write_character(character: Character, fields: dict[str, Any]) -> ImportResult:
    changed = {key: value for key, value in fields.items() if getattr(character, key) != value}
    if not changed:
        return ImportResult(unchanged=1)
    Character.objects.filter(pk=character.pk).update(**changed)
    return ImportResult(updated=1)


def export_character(character: Character, path: Path) -> int:
    write_json(path, {"format": FORMAT, **{key: getattr(character, key) for key in FIELDS}})
    return 1


def register() -> None:
    # First, so later files are read with the master's name (facts tokenising leaves names out).
    register_file_handler(FileHandler(CHARACTER_FILE, 0, read_character, write_character, export_character))
