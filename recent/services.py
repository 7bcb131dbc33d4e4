"""Writes to the recent window and the raw time-indexed log (the conversation write path)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from contextlib import nullcontext
from datetime import datetime, timedelta
from typing import Any, Literal
from uuid import UUID

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from nekomem.characters.locks import (
    lock_character,
    lock_character_update,
    settle_lock,
    settle_lock_source,
    settled_transaction,
)
from nekomem.characters.models import Character
from nekomem.characters.services import character_id_for, character_id_forget
from nekomem.errors import Conflict
from nekomem.journal.services import outbox_op_enqueue_on_commit, outbox_op_register, outbox_op_statement
from nekomem.statements import column, database, insert_select_sql, model_field
from recent.compression import (
    COMPRESS_THRESHOLD_ITEMS,
    compress_inline,
    compress_job_run,
    compress_request,
    window_hard_cap,
)
from recent.jobs import recent_job_cancel, recent_job_request
from recent.messages import normalise_message, window_messages
from recent.models import RawMessage, RecentJob, RecentMessage
from recent.review import review_maybe_spawn

POST_TURN_OP = "extract_facts"  # the original's wire name, kept although the op does more
# The original browser's save limits.
MAX_WINDOW_MESSAGES = 10_000
MAX_MESSAGE_CHARS = 32_768
MAX_WINDOW_CHARS = 2_097_152


class WindowChanged(Conflict):
    """The window changed since the editor read it; saving would overwrite someone else's change."""


def recent_positions_take(*, character_id: int, count: int, **also_update: Any) -> int:
    """Take ``count`` consecutive window positions from the character's counter; returns the first.

    The UPDATE is the row lock (see ``lock_character_update``), so call it inside a transaction, and
    ``also_update`` lets the caller's own UPDATE of the character row ride along.
    """
    lock_character_update(character_id, recent_next_position=F("recent_next_position") + count, **also_update)
    after = Character.objects.filter(pk=character_id).values_list("recent_next_position", flat=True).get()
    return after - count


def recent_messages_insert(*, character_id: int, first_position: int, messages: list[dict[str, Any]]) -> None:
    RecentMessage.objects.bulk_create(
        RecentMessage(character_id=character_id, position=first_position + i, type=m["type"], data=m["data"])
        for i, m in enumerate(messages)
    )


def recent_messages_append(*, character_id: int, messages: list[dict[str, Any]]) -> None:
    """Append to the window, inside a transaction (it takes the row lock)."""
    if not messages:
        return
    first = recent_positions_take(character_id=character_id, count=len(messages))
    recent_messages_insert(character_id=character_id, first_position=first, messages=messages)


def raw_log_values(
    *, character_id: int, messages: list[dict[str, Any]], timestamp: datetime
) -> list[dict[str, Any]]:
    """One call's messages as raw-log rows: a fresh session id and one shared timestamp."""
    session_id = str(uuid.uuid4())
    return [
        {
            "character_id": character_id,
            "session_id": session_id,
            "message": json.dumps(m, ensure_ascii=False),
            "timestamp": timestamp,
        }
        for m in messages
    ]


def raw_log_append(*, character_id: int, messages: list[dict[str, Any]], timestamp: datetime) -> str:
    """Write one call's messages under a fresh session id and one shared timestamp; returns the id."""
    rows = raw_log_values(character_id=character_id, messages=messages, timestamp=timestamp)
    RawMessage.objects.bulk_create(RawMessage(**row) for row in rows)
    return rows[0]["session_id"] if rows else ""


def _activity_fields(*, messages: list[dict[str, Any]], language: str | None) -> dict[str, Any]:
    fields: dict[str, Any] = {"last_activity_at": timezone.now()}
    if language:
        fields["language"] = language[:16]
    if any(m["type"] == "human" for m in messages):
        fields["review_clean"] = False
    return fields


def recent_window_replace(
    *, character_id: int, chat: list[tuple[str, str]], expected_fingerprint: str | None
) -> list[dict[str, Any]]:
    """Replace the whole window with a manually edited one (the memory browser's save).

    Any review in flight is cancelled first, since its result was computed from the old window.
    """
    from recent.selectors import recent_window_dicts, window_fingerprint

    messages = [
        normalise_message({"type": role, "data": {"content": text}}, i) for i, (role, text) in enumerate(chat)
    ]
    recent_job_cancel(character_id=character_id, kind=RecentJob.Kind.REVIEW)
    with settle_lock(character_id), transaction.atomic():
        lock_character(character_id)
        current = recent_window_dicts(character_id=character_id)
        if expected_fingerprint is not None and expected_fingerprint != window_fingerprint(current):
            raise WindowChanged("the recent window changed since it was read; reload and edit again")
        RecentMessage.objects.filter(character_id=character_id).delete()
        recent_messages_append(character_id=character_id, messages=messages)
        Character.objects.filter(pk=character_id).update(review_clean=False)
    return messages


CompressMode = Literal["never", "background", "inline"]


def turn_record(
    *,
    name: str,
    messages: list[dict[str, Any]],
    language: str | None,
    append_recent: bool = True,
    compress: CompressMode = "never",
) -> int:
    """Persist one finished turn atomically: recent window, raw log and post-turn op, or nothing.

    ``/cache``, ``/process`` and ``/renew`` append to the window; ``/settle`` only journals the
    messages it was given (they are already in the window from ``/cache``).

    ``compress``: ``/cache`` never compresses; ``/process`` and ``/settle`` ask for a background
    compression (the chat must not wait for an LLM); ``/renew`` summarises while still holding the
    settle lock, so the ``/new_dialog`` that follows it waits for the memo. Every compressing route
    then considers a history review, which always runs in the background.

    Returns the character's id.
    """
    inline_failed = False
    write: dict[str, Any] = {"messages": messages, "language": language, "append_recent": append_recent}
    if compress == "inline":
        character_id = character_id_for(name=name)
        with settle_lock(character_id):
            with transaction.atomic():
                _turn_write(character_id=character_id, **write)
            inline_failed = not compress_inline(character_id=character_id)
    elif len(messages) > STATEMENT_MAX_MESSAGES:
        character_id = character_id_for(name=name)
        with settled_transaction(character_id):
            _turn_write(character_id=character_id, **write)
    else:
        character_id = _turn_write_statements(name=name, **write)
    # Outside the settle lock: a job's task may run right away (django-q sync mode) and its splice
    # takes the lock itself.
    if compress == "background" or inline_failed:
        compress_request(character_id=character_id)
    if compress != "never":
        review_maybe_spawn(character_id=character_id)
    return character_id


def _post_turn_payload(
    *, messages: list[dict[str, Any]], session_id: str, language: str | None
) -> dict[str, Any]:
    payload: dict[str, Any] = {"messages": messages, "session_id": session_id}
    if language:
        payload["language"] = language
    return payload


def _turn_write(
    *, character_id: int, messages: list[dict[str, Any]], language: str | None, append_recent: bool
) -> None:
    """The turn's one transaction through the ORM, for a large history and for ``/renew``; the
    caller holds the settle lock and has opened the transaction."""
    window = window_messages(messages) if append_recent else []
    window_count = len(window)
    # The counter UPDATE carries the activity fields and is the row lock: one statement for all three.
    first = recent_positions_take(
        character_id=character_id,
        count=window_count,
        **_activity_fields(messages=messages, language=language),
    )
    if not messages:
        return
    if window:
        recent_messages_insert(character_id=character_id, first_position=first, messages=window)
    session_id = raw_log_append(character_id=character_id, messages=messages, timestamp=timezone.now())
    payload = _post_turn_payload(messages=messages, session_id=session_id, language=language)
    outbox_op_register(character_id=character_id, op_type=POST_TURN_OP, payload=payload)


# A chat turn is a few messages; a history larger than this (an import through /cache, say) goes
# through the ORM, which batches it, instead of one statement with a parameter per value.
STATEMENT_MAX_MESSAGES = 64


def _turn_write_statements(
    *, name: str, messages: list[dict[str, Any]], language: str | None, append_recent: bool
) -> int:
    """``_turn_write`` in hand-built statements from the model fields; returns the character's id.

    PostgreSQL: one autocommitted statement. The character UPDATE takes the settle lock, then the
    row lock, and hands the window positions it took from the counter to the inserts, which are
    data-modifying CTEs that run only when it found the character; the statement commits or fails
    as a whole. SQLite: the same UPDATE and INSERTs one after another in one immediate transaction
    under the settle flock (there, each statement is a library call, not a round trip).

    The UPDATE matches the name as well as the cached id; when it finds no row (the character was
    deleted since), the id is looked up again, once.
    """
    character_id = character_id_for(name=name, cached=True)
    for attempt in range(2):
        turn = _TurnStatements(
            character_id=character_id,
            name=name,
            messages=messages,
            language=language,
            append_recent=append_recent,
        )
        if connection.vendor == "postgresql":
            # Inside a caller's transaction (a test, an import) the statement gets a savepoint like
            # the nested atomic block of the SQLite path; on its own it is its own transaction.
            with transaction.atomic() if connection.in_atomic_block else nullcontext():
                found = turn.run_as_one_statement()
        else:
            with settled_transaction(character_id):
                found = turn.run_in_sequence()
        if found:
            if turn.op_id is not None:
                outbox_op_enqueue_on_commit(op_id=turn.op_id)
            return character_id
        character_id_forget(name=name)
        if attempt == 0:
            character_id = character_id_for(name=name, cached=True)
    raise Character.DoesNotExist(f"character {name!r} vanished while its turn was written")


class _TurnStatements:
    """The statements of one turn: the character UPDATE, then the window, raw-log and outbox rows."""

    def __init__(
        self,
        *,
        character_id: int,
        name: str,
        messages: list[dict[str, Any]],
        language: str | None,
        append_recent: bool,
    ) -> None:
        self.db = database()
        self.character_id = character_id
        self.name = name
        self.messages = messages
        self.language = language
        self.append_recent = append_recent
        self.window = window_messages(messages) if append_recent else []
        self.window_count = len(self.window)
        self.op_id: UUID | None = None

    def _quoted(self, field: str) -> str:
        return self.db.ops.quote_name(column(Character, field))

    def _character_update(
        self, *, lock_source: str = "", lock_params: Sequence[Any] = (), returning: str = ""
    ) -> tuple[str, list[Any]]:
        counter = self._quoted("recent_next_position")
        assignments = [f"{counter} = {counter} + %s"]
        params: list[Any] = [self.window_count]
        for field, value in _activity_fields(messages=self.messages, language=self.language).items():
            assignments.append(f"{self._quoted(field)} = %s")
            params.append(model_field(Character, field).get_db_prep_save(value, self.db))
        table = self.db.ops.quote_name(Character._meta.db_table)
        sql = (
            f"UPDATE {table} SET {', '.join(assignments)} {lock_source} "
            f"WHERE {table}.{self._quoted('id')} = %s AND {table}.{self._quoted('name')} = %s "
            f"RETURNING {table}.{counter} - %s AS first_position{returning}"
        )
        return sql, [*params, *lock_params, self.character_id, self.name, self.window_count]

    def _inserts(self, *, source: str | None, first_position: int | None) -> list[tuple[str, list[Any]]]:
        """The INSERTs. With ``source`` (a CTE of the same statement) the positions and the raw log's
        timestamp come from it; without, the positions start at ``first_position`` and the timestamp
        is read now, inside the caller's transaction after its UPDATE."""
        if not self.messages:
            return []
        inserts: list[tuple[str, list[Any]]] = []
        if self.window:
            window = [
                {"character_id": self.character_id, "type": m["type"], "data": m["data"]} for m in self.window
            ]
            position = column(RecentMessage, "position")
            if source is None:
                assert first_position is not None
                for i, row in enumerate(window):
                    row["position"] = first_position + i
                inserts.append(insert_select_sql(RecentMessage, window))
            else:
                inserts.append(
                    insert_select_sql(
                        RecentMessage,
                        window,
                        source=source,
                        computed=lambda i: {position: f"{source}.first_position + {i}"},
                    )
                )
        raw = raw_log_values(character_id=self.character_id, messages=self.messages, timestamp=timezone.now())
        timestamp = column(RawMessage, "timestamp")
        inserts.append(
            insert_select_sql(
                RawMessage,
                raw,
                source=source,
                computed=(lambda i: {timestamp: f"{source}.written_at"}) if source else None,
            )
        )
        op = outbox_op_statement(
            character_id=self.character_id,
            op_type=POST_TURN_OP,
            payload=_post_turn_payload(
                messages=self.messages, session_id=raw[0]["session_id"], language=self.language
            ),
            source=source,
        )
        inserts.append((op.sql, op.params))
        self.op_id = op.op_id
        return inserts

    def run_as_one_statement(self) -> bool:
        """PostgreSQL: everything in one statement; False when the character was not found."""
        lock_source, lock_params = settle_lock_source(self.character_id)
        update, params = self._character_update(
            lock_source=f"FROM {lock_source}",
            lock_params=lock_params,
            # The raw log's timestamp is read after the locks are held, so time order is commit order.
            returning=", clock_timestamp() AS written_at",
        )
        ctes = [f"settled AS ({update})"]
        for index, (sql, insert_params) in enumerate(self._inserts(source="settled", first_position=None)):
            ctes.append(f"write_{index} AS ({sql})")
            params.extend(insert_params)
        with self.db.cursor() as cursor:
            cursor.execute(f"WITH {', '.join(ctes)} SELECT first_position FROM settled", params)
            return cursor.fetchone() is not None

    def run_in_sequence(self) -> bool:
        """Inside the caller's transaction, which holds the settle lock: the UPDATE (the row lock),
        then the INSERTs. False when the character was not found."""
        update, params = self._character_update()
        with self.db.cursor() as cursor:
            cursor.execute(update, params)
            row = cursor.fetchone()
            if row is None:
                return False
            for sql, insert_params in self._inserts(source=None, first_position=row[0]):
                cursor.execute(sql, insert_params)
        return True


# --- idle maintenance ----------------------------------------------------------------------------------

IDLE_AFTER = timedelta(seconds=10)


def _still_idle(*, character_id: int, seen: datetime | None) -> bool:
    last = Character.objects.filter(pk=character_id).values_list("last_activity_at", flat=True).first()
    return last == seen and (last is None or timezone.now() - last >= IDLE_AFTER)


def idle_maintenance_run() -> int:
    """Compress and review characters idle for 10 s or more; returns how many were visited.

    Each step re-checks idleness first, so a character that starts chatting is left alone at once.
    """
    cutoff = timezone.now() - IDLE_AFTER
    idle = Character.objects.filter(last_activity_at__lte=cutoff).values_list("pk", "last_activity_at")
    visited = 0
    for character_id, seen in list(idle):
        if not _still_idle(character_id=character_id, seen=seen):
            continue
        visited += 1
        _idle_compress(character_id=character_id)
        if _still_idle(character_id=character_id, seen=seen):
            review_maybe_spawn(character_id=character_id)
    return visited


def _idle_compress(*, character_id: int) -> None:
    last = RecentJob.objects.filter(character_id=character_id, kind=RecentJob.Kind.COMPRESS).first()
    if last is not None and last.status == RecentJob.Status.DEAD:
        # Covers a worker that died between dead-lettering the job and applying the cap.
        window_hard_cap(character_id=character_id)
    if RecentMessage.objects.filter(character_id=character_id).count() <= COMPRESS_THRESHOLD_ITEMS:
        return
    job, created = recent_job_request(character_id=character_id, kind=RecentJob.Kind.COMPRESS, enqueue=False)
    if created:
        compress_job_run(job_id=job.pk)
