"""The write of one chat turn, two ways that must write the same rows.

``turn_write_orm`` is the reference: plain ORM calls, used for a large history and for ``/renew``.
``turn_write_statement`` is the hot path of ``/cache``: the same UPDATE and INSERTs built by hand
from the model fields (``nekomem.statements``), one statement on PostgreSQL and one immediate
transaction on SQLite. It is what lets SQLite reach its ``/cache`` target (``bench/cache_throughput.py``);
``tests/recent/test_turn_write.py`` checks that both write the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Model
from django.utils import timezone

from nekomem.characters.language import language_arrival_stamp, language_choice_sql, language_choice_update
from nekomem.characters.locks import lock_character_update, settle_lock_source, settled_transaction
from nekomem.characters.models import Character
from nekomem.characters.services import character_id_for, character_id_forget
from nekomem.journal.registry import POST_TURN_OP
from nekomem.journal.services import (
    outbox_op_enqueue_on_commit,
    outbox_op_register,
    outbox_op_statement,
    raw_turns_written_on_commit,
)
from nekomem.statements import column, database, insert_select_sql, model_field
from recent.messages import window_messages
from recent.models import RawMessage, RecentMessage, RecentWindowState
from recent.services.raw_log import raw_log_append, raw_log_values
from recent.services.window import recent_messages_insert, recent_positions_take


def _activity_fields() -> dict[str, Any]:
    """What every turn sets on the character row (whose UPDATE is also the row lock); an explicit
    language is remembered beside it, in arrival order (``language_choice_update``)."""
    return {"last_activity_at": timezone.now()}


def _clears_review(messages: list[dict[str, Any]]) -> bool:
    """A new human message makes the window worth reviewing again."""
    return any(m["type"] == "human" for m in messages)


def _post_turn_payload(
    *, messages: list[dict[str, Any]], session_id: str, language: str | None
) -> dict[str, Any]:
    payload: dict[str, Any] = {"messages": messages, "session_id": session_id}
    if language:
        payload["language"] = language
    return payload


def turn_write_orm(
    *,
    character_id: int,
    messages: list[dict[str, Any]],
    language: str | None,
    append_recent: bool,
    language_order: int | None = None,
) -> None:
    """The turn's one transaction through the ORM, for a large history and for ``/renew``; the
    caller holds the settle lock and has opened the transaction. ``turn_write_statement`` below
    must write exactly the same rows."""
    window = window_messages(messages) if append_recent else []
    window_count = len(window)
    order = language_order or language_arrival_stamp()
    lock_character_update(
        character_id, **_activity_fields(), **language_choice_update(language=language, order=order)
    )
    first = recent_positions_take(
        character_id=character_id, count=window_count, clear_review=_clears_review(messages)
    )
    if not messages:
        return
    if window:
        recent_messages_insert(character_id=character_id, first_position=first, messages=window)
    session_id = raw_log_append(character_id=character_id, messages=messages, timestamp=timezone.now())
    payload = _post_turn_payload(messages=messages, session_id=session_id, language=language)
    outbox_op_register(character_id=character_id, op_type=POST_TURN_OP, payload=payload)
    raw_turns_written_on_commit(character_id=character_id)


# A chat turn is a few messages; a history larger than this (an import through /cache, say) goes
# through the ORM, which batches it, instead of one statement with a parameter per value.
STATEMENT_MAX_MESSAGES = 64


def turn_write_statement(
    *,
    name: str,
    messages: list[dict[str, Any]],
    language: str | None,
    append_recent: bool,
    language_order: int | None = None,
) -> int:
    """``turn_write_orm`` in hand-built statements from the model fields; returns the character's id.

    PostgreSQL: one autocommitted statement. The character UPDATE takes the settle lock, then the
    row lock; the window state's upsert takes positions from the counter and hands them to the
    inserts, which are data-modifying CTEs that run only when the UPDATE found the character; the
    statement commits or fails as a whole. SQLite: the same UPDATE, upsert and INSERTs one after
    another in one immediate transaction under the settle flock (there, each statement is a library
    call, not a round trip). PostgreSQL with ``NEKOMEM_RAW_LOG_CLOCK=server`` takes the SQLite way
    too, in a transaction under the transaction-scoped settle lock (``_one_statement``).

    The UPDATE matches the name as well as the cached id; when it finds no row (the character was
    deleted since), the id is looked up again, once.
    """
    character_id = character_id_for(name=name, cached=True)
    order = language_order or language_arrival_stamp()
    for attempt in range(2):
        turn = _TurnStatements(
            character_id=character_id,
            name=name,
            messages=messages,
            language=language,
            language_order=order,
            append_recent=append_recent,
        )
        if _one_statement():
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
                raw_turns_written_on_commit(character_id=character_id)
            return character_id
        character_id_forget(name=name)
        if attempt == 0:
            character_id = character_id_for(name=name, cached=True)
    raise Character.DoesNotExist(f"character {name!r} vanished while its turn was written")


def _one_statement() -> bool:
    """Whether the turn is one statement, whose raw-log stamp is the database's clock: PostgreSQL
    unless ``NEKOMEM_RAW_LOG_CLOCK`` is ``server``. The sequence stamps it with ``timezone.now()``
    after the settle and row locks, so a simulated server clock (bench/years.py) reaches the raw log
    that extraction, reflection and persona read by time."""
    return connection.vendor == "postgresql" and settings.NEKOMEM_RAW_LOG_CLOCK == "database"


class _TurnStatements:
    """The statements of one turn: the character UPDATE, the window counter's upsert, then the
    window, raw-log and outbox rows."""

    def __init__(
        self,
        *,
        character_id: int,
        name: str,
        messages: list[dict[str, Any]],
        language: str | None,
        language_order: int,
        append_recent: bool,
    ) -> None:
        self.db = database()
        self.character_id = character_id
        self.name = name
        self.messages = messages
        self.language = language
        self.language_order = language_order
        self.append_recent = append_recent
        self.window = window_messages(messages) if append_recent else []
        self.window_count = len(self.window)
        self.op_id: UUID | None = None

    def _quote(self, model: type[Model], field: str) -> str:
        return self.db.ops.quote_name(column(model, field))

    def _character_update(
        self, *, lock_source: str = "", lock_params: Sequence[Any] = (), returning: str = ""
    ) -> tuple[str, list[Any]]:
        assignments: list[str] = []
        params: list[Any] = []
        for field, value in _activity_fields().items():
            assignments.append(f"{self._quote(Character, field)} = %s")
            params.append(model_field(Character, field).get_db_prep_save(value, self.db))
        table = self.db.ops.quote_name(Character._meta.db_table)
        choice, choice_params = language_choice_sql(
            language=self.language,
            order=self.language_order,
            table=table,
            language_column=self._quote(Character, "language"),
            order_column=self._quote(Character, "language_order"),
        )
        assignments += choice
        params += choice_params
        written = self._quote(Character, "raw_rows_written")
        assignments.append(f"{written} = {table}.{written} + %s")  # raw_log_append's count of its rows
        params.append(len(self.messages))
        pk = self._quote(Character, "id")
        sql = (
            f"UPDATE {table} SET {', '.join(assignments)} {lock_source} "
            f"WHERE {table}.{pk} = %s AND {table}.{self._quote(Character, 'name')} = %s "
            f"RETURNING {table}.{pk} AS character_id{returning}"
        )
        return sql, [*params, *lock_params, self.character_id, self.name]

    def _counter_upsert(self, *, source: str | None) -> tuple[str, list[Any]]:
        """Take the turn's window positions from the counter, creating the row on a first turn;
        returns ``first_position``. With ``source`` it runs only when that CTE yields the character."""
        table = self.db.ops.quote_name(RecentWindowState._meta.db_table)
        character = self._quote(RecentWindowState, "character")
        counter = self._quote(RecentWindowState, "next_position")
        clean = self._quote(RecentWindowState, "review_clean")
        values = "%s, %s, %s" if source is None else f"{source}.character_id, %s, %s"
        params: list[Any] = [self.character_id] if source is None else []
        params += [self.window_count, False]
        updates = [f"{counter} = {table}.{counter} + EXCLUDED.{counter}"]
        if _clears_review(self.messages):
            updates.append(f"{clean} = EXCLUDED.{clean}")
        inserted = f"VALUES ({values})" if source is None else f"SELECT {values} FROM {source} WHERE true"
        sql = (
            f"INSERT INTO {table} ({character}, {counter}, {clean}) {inserted} "
            f"ON CONFLICT ({character}) DO UPDATE SET {', '.join(updates)} "
            f"RETURNING {counter} - %s AS first_position"
        )
        return sql, [*params, self.window_count]

    def _inserts(
        self, *, positions: str | None, clock: str | None, first_position: int | None
    ) -> list[tuple[str, list[Any]]]:
        """The INSERTs. With ``positions`` and ``clock`` (CTEs of the same statement) the positions
        and the raw log's timestamp come from them; without, the positions start at
        ``first_position`` and the timestamp is read now, inside the caller's transaction after its
        UPDATE."""
        if not self.messages:
            return []
        inserts: list[tuple[str, list[Any]]] = []
        if self.window:
            window = [
                {"character_id": self.character_id, "type": m["type"], "data": m["data"]} for m in self.window
            ]
            position = column(RecentMessage, "position")
            if positions is None:
                assert first_position is not None
                for i, row in enumerate(window):
                    row["position"] = first_position + i
                inserts.append(insert_select_sql(RecentMessage, window))
            else:
                inserts.append(
                    insert_select_sql(
                        RecentMessage,
                        window,
                        source=positions,
                        computed=lambda i: {position: f"{positions}.first_position + {i}"},
                    )
                )
        raw = raw_log_values(character_id=self.character_id, messages=self.messages, timestamp=timezone.now())
        timestamp = column(RawMessage, "timestamp")
        inserts.append(
            insert_select_sql(
                RawMessage,
                raw,
                source=clock,
                computed=(lambda i: {timestamp: f"{clock}.written_at"}) if clock else None,
            )
        )
        op = outbox_op_statement(
            character_id=self.character_id,
            op_type=POST_TURN_OP,
            payload=_post_turn_payload(
                messages=self.messages, session_id=raw[0]["session_id"], language=self.language
            ),
            source=clock,
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
        upsert, upsert_params = self._counter_upsert(source="settled")
        ctes = [f"settled AS ({update})", f"counter AS ({upsert})"]
        params.extend(upsert_params)
        inserts = self._inserts(positions="counter", clock="settled", first_position=None)
        for index, (sql, insert_params) in enumerate(inserts):
            ctes.append(f"write_{index} AS ({sql})")
            params.extend(insert_params)
        with self.db.cursor() as cursor:
            cursor.execute(f"WITH {', '.join(ctes)} SELECT first_position FROM counter", params)
            return cursor.fetchone() is not None

    def run_in_sequence(self) -> bool:
        """Inside the caller's transaction, which holds the settle lock: the UPDATE (the row lock),
        the counter's upsert, then the INSERTs. False when the character was not found."""
        update, params = self._character_update()
        with self.db.cursor() as cursor:
            cursor.execute(update, params)
            if cursor.fetchone() is None:
                return False
            cursor.execute(*self._counter_upsert(source=None))
            (first_position,) = cursor.fetchone()
            for sql, insert_params in self._inserts(
                positions=None, clock=None, first_position=first_position
            ):
                cursor.execute(sql, insert_params)
        return True
