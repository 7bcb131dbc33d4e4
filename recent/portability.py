"""``recent.json``, ``recent_meta.json`` and ``time_indexed.db`` for import/export (reference §2.1–2.3).

``time_indexed.db`` is a SQLite file in the original's schema, read and written with the stdlib
sqlite3 module whatever database nekomem itself runs on.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from django.utils import timezone

from nekomem.characters.models import Character
from nekomem.characters.services import character_raw_rows_counted
from nekomem.portability import (
    FileHandler,
    ImportResult,
    MalformedFile,
    progress,
    read_json,
    register_file_handler,
    write_json,
    write_records,
)
from nekomem.statements import instances_insert
from recent.jobs import REVIEW_JOB, recent_job_cancel
from recent.models import RawMessage, RecentMessage, RecentMeta
from recent.selectors import theater_capsule_list
from recent.services import recent_messages_append
from recent.services.history import memo_changed, memo_text
from recent.services.theater import is_theater_episode, theater_capsules_replace

MESSAGE_TYPES = ("human", "ai", "system")
BATCH = 2000
# SQLAlchemy's storage format for DateTime on SQLite, which the original's column used.
SQLITE_DATETIME = "%Y-%m-%d %H:%M:%S.%f"


def _aware(value: Any) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"expected a timestamp string, got {type(value).__name__}")
    parsed = datetime.fromisoformat(value)
    return timezone.make_aware(parsed) if timezone.is_naive(parsed) else parsed


def _naive_local(value: datetime) -> datetime:
    return timezone.localtime(value).replace(tzinfo=None)


def _check_message(message: Any) -> dict[str, Any]:
    if not isinstance(message, dict):
        raise ValueError(f"expected a message object, got {type(message).__name__}")
    if message.get("type") not in MESSAGE_TYPES:
        raise ValueError(f"message type must be one of {', '.join(MESSAGE_TYPES)}")
    if not isinstance(message.get("data"), dict):
        raise ValueError("message 'data' must be an object")
    return message


# --- recent.json --------------------------------------------------------------------------------------


def recent_read(path: Path) -> list[dict[str, Any]]:
    data = read_json(path)
    if not isinstance(data, list):
        raise MalformedFile(path, f"expected a JSON list of messages, got {type(data).__name__}")
    for index, message in enumerate(data):
        try:
            _check_message(message)
        except ValueError as exc:
            raise MalformedFile(path, str(exc), entry=f"#{index}") from exc
    return data


def _capsule_messages(character: Character) -> list[dict[str, Any]]:
    return [capsule.message for capsule in theater_capsule_list(character_id=character.pk)]


def recent_write(character: Character, data: list[dict[str, Any]]) -> ImportResult:
    # Theater capsules sit in the original's recent.json among the messages; here they live beside
    # the window (recent/services/theater.py), so they are taken out of it on the way in.
    capsules = [m for m in data if is_theater_episode([m])]
    window = [m for m in data if not is_theater_episode([m])] if capsules else data
    current = [
        m.as_langchain() for m in RecentMessage.objects.filter(character=character).order_by("position")
    ]
    stored_capsules = _capsule_messages(character)
    if current == window and sorted(map(_key, stored_capsules)) == sorted(map(_key, capsules)):
        return ImportResult(unchanged=len(data))
    # The file is the window: it replaces whatever window the character had, and a review in flight
    # was computed from the old one.
    recent_job_cancel(character_id=character.pk, kind=REVIEW_JOB)
    before = memo_text(character.pk)
    RecentMessage.objects.filter(character=character).delete()
    recent_messages_append(character_id=character.pk, messages=window)
    memo_changed(character_id=character.pk, before=before)
    theater_capsules_replace(character_id=character.pk, messages=capsules)
    return ImportResult(created=len(data))


def _key(message: dict[str, Any]) -> str:
    return json.dumps(message, sort_keys=True, ensure_ascii=False)


def recent_export(character: Character, path: Path) -> int | None:
    rows = [m.as_langchain() for m in RecentMessage.objects.filter(character=character).order_by("position")]
    # The capsules after the window, as the original's file holds them: kept through its compressions.
    return write_records(path, rows + _capsule_messages(character))


# --- recent_meta.json ---------------------------------------------------------------------------------


def recent_meta_read(path: Path) -> datetime | None:
    data = read_json(path)
    if not isinstance(data, dict):
        raise MalformedFile(path, f"expected a JSON object, got {type(data).__name__}")
    raw = data.get("last_past_block_update_at", data.get("last_summary_at"))  # older key still read
    try:
        return _aware(raw) if raw is not None else None
    except ValueError as exc:
        raise MalformedFile(path, str(exc), entry="last_past_block_update_at") from exc


def recent_meta_write(character: Character, anchor: datetime | None) -> ImportResult:
    meta, created = RecentMeta.objects.get_or_create(character=character)
    if not created and meta.last_past_block_update_at == anchor:
        return ImportResult(unchanged=1)
    meta.last_past_block_update_at = anchor
    meta.save()
    return ImportResult(created=1 if created else 0, updated=0 if created else 1)


def recent_meta_export(character: Character, path: Path) -> int | None:
    meta = RecentMeta.objects.filter(character=character).first()
    if meta is None:
        return None
    anchor = meta.last_past_block_update_at
    write_json(path, {"last_past_block_update_at": _naive_local(anchor).isoformat() if anchor else None})
    return 1


# --- time_indexed.db ------------------------------------------------------------------------------------

_RowKey = tuple[str, str, datetime]


def time_indexed_read(path: Path) -> list[_RowKey]:
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise MalformedFile(path, f"cannot open as SQLite ({exc})") from exc
    try:
        rows = db.execute(
            "SELECT id, session_id, message, timestamp FROM time_indexed_original ORDER BY timestamp, id"
        ).fetchall()
    except sqlite3.Error as exc:
        raise MalformedFile(path, f"no readable time_indexed_original table ({exc})") from exc
    finally:
        db.close()
    parsed = []
    for rowid, session_id, message, stamp in progress(rows, total=len(rows), desc=path.name):
        try:
            _check_message(json.loads(message))
            if not isinstance(session_id, str) or not session_id:
                raise ValueError("empty session_id")
            parsed.append((session_id, message, _aware(stamp)))
        except (ValueError, TypeError) as exc:
            raise MalformedFile(path, str(exc), entry=f"time_indexed_original id={rowid}") from exc
    return parsed


def time_indexed_write(character: Character, rows: list[_RowKey]) -> ImportResult:
    # A multiset, so two identical rows in the file stay two rows and a re-import adds none.
    have = Counter(
        RawMessage.objects.filter(character=character).values_list("session_id", "message", "timestamp")
    )
    new = []
    for key in rows:
        if have[key] > 0:
            have[key] -= 1
            continue
        new.append(RawMessage(character=character, session_id=key[0], message=key[1], timestamp=key[2]))
    instances_insert(RawMessage, new)
    character_raw_rows_counted(character_id=character.pk, rows=len(new))
    return ImportResult(created=len(new), unchanged=len(rows) - len(new))


# Our own table in the file (the original ignores tables it does not know): the last raw row written,
# so the install's live view appends the rows after it instead of writing the log again.
EXPORT_MARK_TABLE = "nekomem_export"


def _insert_rows(db: sqlite3.Connection, rows: Any) -> tuple[int, int]:
    """Append ``rows`` to the file's log; returns (rows written, the last raw row id written)."""
    count, last_id = 0, 0
    for row in rows.iterator(chunk_size=BATCH):
        db.execute(
            "INSERT INTO time_indexed_original (session_id, message, timestamp) VALUES (?, ?, ?)",
            (row.session_id, row.message, _naive_local(row.timestamp).strftime(SQLITE_DATETIME)),
        )
        count += 1
        last_id = max(last_id, row.id)
    return count, last_id


def time_indexed_export(character: Character, path: Path) -> int | None:
    rows = RawMessage.objects.filter(character=character).order_by("timestamp", "id")
    if not rows.exists():
        return None
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    db = sqlite3.connect(tmp)
    try:
        db.executescript(
            "CREATE TABLE time_indexed_original (id INTEGER PRIMARY KEY, session_id TEXT, message TEXT,"
            " timestamp DATETIME);"
            "CREATE INDEX idx_time_indexed_original_timestamp ON time_indexed_original (timestamp);"
            # Kept empty for structural compatibility: the original no longer writes it (§2.3).
            "CREATE TABLE time_indexed_compressed (id INTEGER PRIMARY KEY, session_id TEXT, message TEXT,"
            " timestamp DATETIME);"
            f"CREATE TABLE {EXPORT_MARK_TABLE} (last_raw_id INTEGER NOT NULL);"
        )
        count, last_id = _insert_rows(db, rows)
        db.execute(f"INSERT INTO {EXPORT_MARK_TABLE} (last_raw_id) VALUES (?)", (last_id,))
        db.commit()
    finally:
        db.close()
    os.replace(tmp, path)
    return count


def time_indexed_append(character: Character, path: Path) -> int | None:
    """Append the raw rows written since this file was last brought up to date, in place (the raw log
    only grows). None when the file is not one this writer can extend: no mark of ours, or rows it
    holds that the database no longer has (an import, a restore, a deletion): it is exported whole."""
    if not path.exists():
        return None
    try:
        db = sqlite3.connect(path)
    except sqlite3.Error:
        return None
    try:
        try:
            marks = db.execute(f"SELECT last_raw_id FROM {EXPORT_MARK_TABLE}").fetchall()
            in_file = db.execute("SELECT COUNT(*) FROM time_indexed_original").fetchone()[0]
        except sqlite3.Error:
            return None
        if len(marks) != 1:
            return None
        last_id = int(marks[0][0])
        written = RawMessage.objects.filter(character=character, id__lte=last_id).count()
        if written != in_file:
            return None
        rows = RawMessage.objects.filter(character=character, id__gt=last_id).order_by("timestamp", "id")
        count, newest = _insert_rows(db, rows)
        if count:
            db.execute(f"UPDATE {EXPORT_MARK_TABLE} SET last_raw_id = ?", (newest,))
        db.commit()
        return count
    finally:
        db.close()


register_file_handler(
    # Old installs kept the window beside the character directories: memory/recent_<name>.json (§2.1).
    FileHandler(
        "recent.json", 10, recent_read, recent_write, recent_export, legacy_beside=("recent_", ".json")
    )
)
register_file_handler(
    FileHandler("recent_meta.json", 11, recent_meta_read, recent_meta_write, recent_meta_export)
)
register_file_handler(
    FileHandler(
        "time_indexed.db",
        12,
        time_indexed_read,
        time_indexed_write,
        time_indexed_export,
        stamp=lambda c: c.raw_rows_written,
        append=time_indexed_append,
    )
)
