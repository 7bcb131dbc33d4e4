"""The full original-layout directory under tests/fixtures, and ways to compare two of them."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from django.db.models import Model

from nekomem.characters.models import Character

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "original-layout"
NAME = "小天"
# Every file of reference §2 that the import reads, and ours.
FILES = (
    "nekomem_character.json",
    "recent.json",
    "recent_meta.json",
    "time_indexed.db",
    "facts.json",
    "facts_archive.json",
    "facts_pending_dedup.json",
    "reflections.json",
    "reflection_archive",
    "surfaced.json",
    "cursors.json",
    "persona.json",
    "persona_archive",
    "persona_corrections.json",
    "settings.json",
    "events.ndjson",
    "events_applied.json",
    "outbox.ndjson",
)
# Written by an export beside them, read by our import and by no original (issue 49's history).
EXPORT_ONLY = ("history.ndjson",)


def copy_fixture(root: Path) -> Path:
    """A writable copy of the fixture as ``root/小天/…``; returns ``root``."""
    shutil.copytree(FIXTURE, root)
    return root


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def ndjson(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def time_indexed_rows(path: Path) -> list[tuple[str, str, str]]:
    db = sqlite3.connect(path)
    try:
        return list(
            db.execute(
                "SELECT session_id, message, timestamp FROM time_indexed_original ORDER BY timestamp, id"
            )
        )
    finally:
        db.close()


def outbox_ops(path: Path) -> dict[str, dict[str, Any]]:
    """Each op as its lines tell it. The time of each failed attempt is not kept (only their number
    and the op's last change), so it is left out of the comparison."""
    ops: dict[str, dict[str, Any]] = {}
    for line in ndjson(path):
        if line["status"] == "pending":
            ops[line["op_id"]] = {
                "type": line["type"],
                "payload": line["payload"],
                "ts": line["ts"],
                "attempts": 0,
                "done": None,
            }
    for line in ndjson(path):
        if line["status"] == "attempt":
            ops[line["op_id"]]["attempts"] += 1
        elif line["status"] == "done":
            ops[line["op_id"]]["done"] = line["ts"]
    return ops


def file_contents(folder: Path, name: str) -> Any:
    """What a file (or shard directory) of the layout says, in a form two exports can be compared by."""
    path = folder / name
    if path.is_dir():
        return {shard.name: load(shard) for shard in sorted(path.glob("*.json"))}
    if name == "time_indexed.db":
        return time_indexed_rows(path)
    if name == "outbox.ndjson":
        return outbox_ops(path)
    if name.endswith(".ndjson"):
        return ndjson(path)
    if name == "cursors.json":
        # The original never writes extraction's cursor; an export of an imported directory adds the
        # one the import inferred (checked on its own in test_original_layout).
        return {k: v for k, v in load(path).items() if k != "extracted_until"}
    return load(path)


def database_snapshot() -> dict[str, list[dict[str, Any]]]:
    """Every row of every character and of every table that belongs to one."""
    tables: list[type[Model]] = [Character]
    for relation in Character._meta.related_objects:
        model = relation.related_model
        if isinstance(model, type) and issubclass(model, Model) and model not in tables:
            tables.append(model)
    return {
        f"{model._meta.app_label}.{model.__name__}": list(model._default_manager.order_by("pk").values())
        for model in tables
    }


def fixture_zip(top: str | None = NAME) -> bytes:
    """The fixture directory as a zip: inside ``top/`` as an export writes it, or at the top level."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted((FIXTURE / NAME).rglob("*")):
            if path.is_file():
                relative = path.relative_to(FIXTURE / NAME).as_posix()
                zipped.write(path, f"{top}/{relative}" if top else relative)
    return buffer.getvalue()
