"""The only module that builds locks.

Three locks, always taken in this order:

1. ``settle_lock`` — the original's per-character "settle lock". It serialises a character's
   conversation writes and lets ``/new_dialog`` wait for a settle in flight. It can be held
   across an LLM call (``/renew`` keeps it across the first summary) without holding a database
   transaction open: a session-level advisory lock on PostgreSQL, an exclusive ``flock`` on a
   per-character file next to the SQLite database on the embedded default.
2. ``lock_character`` — the row lock inside a transaction. On PostgreSQL a ``SELECT … FOR
   UPDATE`` on the character; on SQLite every write transaction is ``BEGIN IMMEDIATE`` (see
   settings), so the database write lock already serialises writers and this is a plain read.
   Layer rows are locked after it, each ordered by primary key.
3. ``sqlite_writer_turn`` — on the embedded default only, the turn of one write transaction, taken
   just before ``BEGIN IMMEDIATE`` by the SQLite backend and given back at its COMMIT or ROLLBACK.
   It lives beside that backend (``nekomem/sqlite_backend/turnstile.py``), which loads before any
   model and so cannot import this module.

``settled_transaction`` takes both for a critical section that is exactly one transaction, and
``lock_character_update`` takes the row lock with the UPDATE the caller needs anyway. On
PostgreSQL a chat turn is one statement, and ``settle_lock_source`` takes both locks inside it:
the chat write path is the hot path, and every statement there is a round trip.

Every lazy creator of a per-character row (a cursor, a state row: one row per character, made on
first use) uses ``character_row_ensure`` or holds the character lock when it inserts. On
PostgreSQL an insert made without the lock deadlocks against a holder that writes the same row; see
``character_row_ensure``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TypeVar

from django.conf import settings
from django.db import connection, models, transaction

from nekomem.characters.models import Character
from nekomem.runtime.state import storage_writes_check
from nekomem.statements import instance_get

# Keeps our advisory-lock keys apart from any other application sharing the database.
_ADVISORY_NAMESPACE = 0x6E656B6F  # "neko"

_ModelT = TypeVar("_ModelT", bound=models.Model)


def lock_character(character_id: int) -> Character:
    """Lock one character row until the surrounding transaction ends."""
    if not connection.in_atomic_block:
        raise RuntimeError("lock_character must be called inside transaction.atomic")
    storage_writes_check()  # background work stops here once storage is blocked
    return Character.objects.select_for_update().get(pk=character_id)


def lock_character_update(character_id: int, **fields: object) -> None:
    """Lock one character row by updating ``fields`` on it, until the surrounding transaction ends.

    One statement instead of ``lock_character`` plus an UPDATE. On PostgreSQL the UPDATE takes the
    row lock ``FOR NO KEY UPDATE``, which conflicts with every other ``lock_character`` (``FOR
    UPDATE``) and with itself, so writers serialise exactly as before.
    """
    if not connection.in_atomic_block:
        raise RuntimeError("lock_character_update must be called inside transaction.atomic")
    if not fields:
        raise ValueError("lock_character_update needs at least one field to update")
    storage_writes_check()
    if Character.objects.filter(pk=character_id).update(**fields) != 1:
        raise Character.DoesNotExist(f"character {character_id} does not exist")


def character_row_ensure(
    model: type[_ModelT], character_id: int, defaults: Mapping[str, object] | None = None
) -> _ModelT:
    """The character's one row of ``model``, locked until the surrounding transaction ends; a missing
    one is created first, with ``defaults``.

    Django makes foreign keys ``DEFERRABLE INITIALLY DEFERRED`` on PostgreSQL, so an INSERT checks
    its character at COMMIT, with a KEY SHARE lock on the character row. A creator that inserts
    without the character lock therefore waits at its COMMIT for a holder of that lock, while the
    holder's own insert of the same row waits for the creator's uncommitted one: "deadlock
    detected", even with ``ON CONFLICT DO NOTHING``. Taking the character lock before the insert
    queues the creator behind the holder instead, and ``ignore_conflicts`` then finds the holder's
    row. An existing row costs one locking SELECT and no character lock; a caller that needs the
    character lock as well takes it before calling this (this module's order).
    """
    if not connection.in_atomic_block:
        raise RuntimeError("character_row_ensure must be called inside transaction.atomic")
    rows = model._default_manager.filter(character_id=character_id)
    row = rows.select_for_update().first()
    if row is not None:
        return row
    lock_character(character_id)
    model._default_manager.bulk_create(
        [model(character_id=character_id, **(defaults or {}))], ignore_conflicts=True
    )
    return rows.select_for_update().get()


def lock_rows(queryset: models.QuerySet[_ModelT]) -> models.QuerySet[_ModelT]:
    """``queryset`` locking its rows, in primary-key order, until the surrounding transaction ends.

    For a layer's own rows, taken after ``lock_character`` (this module's order).
    """
    if not connection.in_atomic_block:
        raise RuntimeError("lock_rows must be called inside transaction.atomic")
    return queryset.select_for_update().order_by("pk")


def _lock_file_path(character_id: int) -> str:
    lock_dir = settings.VAR_DIR / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    db_name = os.path.basename(str(connection.settings_dict["NAME"]))
    return str(lock_dir / f"{db_name}.character-{character_id}.lock")


@contextmanager
def settle_lock(character_id: int) -> Iterator[None]:
    """Hold the character's settle lock for the block; blocks while another holder has it."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s, %s)", [_ADVISORY_NAMESPACE, character_id])
        try:
            yield
        finally:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [_ADVISORY_NAMESPACE, character_id])
        return
    fd = os.open(_lock_file_path(character_id), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock


# Keys of ``exclusive_work`` in their own namespace, apart from the characters' settle locks.
_WORK_NAMESPACE = 0x6E656B77  # "nekw"


@contextmanager
def exclusive_work(name: str) -> Iterator[bool]:
    """Try to hold a process-spanning lock named ``name`` for the block, without waiting: yields True
    when this caller holds it, False when another process (or thread) already does. For background
    loops that must not run twice at once across the cluster, where a second copy would only redo the
    first one's work.

    A session-level advisory lock on PostgreSQL (so it holds across machines), a non-blocking
    ``flock`` next to the SQLite database on the embedded default; both are released when the holder
    dies.
    """
    if connection.vendor == "postgresql":
        key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big", signed=True)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [_WORK_NAMESPACE, key])
            held = bool(cursor.fetchone()[0])
        try:
            yield held
        finally:
            if held:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [_WORK_NAMESPACE, key])
        return
    lock_dir = settings.VAR_DIR / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    db_name = os.path.basename(str(connection.settings_dict["NAME"]))
    fd = os.open(str(lock_dir / f"{db_name}.work-{name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


@contextmanager
def store_lock(name: str, *, timeout: float) -> Iterator[bool]:
    """Hold a process-spanning lock named ``name`` for the block, waiting for it at most ``timeout``
    seconds: yields True when this caller holds it, False when it did not come in time. For a store
    shared by every character (public knowledge) whose writers must take turns but must never queue
    a request behind a long import.

    Same kinds of lock as ``exclusive_work`` (its own namespace), tried again every few milliseconds
    until the deadline: neither an advisory lock nor ``flock`` takes a timeout of its own.
    """
    deadline = time.monotonic() + timeout
    if connection.vendor == "postgresql":
        key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big", signed=True)
        held = False
        with connection.cursor() as cursor:
            while True:
                cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [_STORE_NAMESPACE, key])
                held = bool(cursor.fetchone()[0])
                if held or time.monotonic() >= deadline:
                    break
                time.sleep(_STORE_LOCK_POLL)
        try:
            yield held
        finally:
            if held:
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [_STORE_NAMESPACE, key])
        return
    lock_dir = settings.VAR_DIR / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    db_name = os.path.basename(str(connection.settings_dict["NAME"]))
    fd = os.open(str(lock_dir / f"{db_name}.store-{name}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(_STORE_LOCK_POLL)
                continue
            break
        yield True
    finally:
        os.close(fd)


# Keys of ``store_lock`` in their own namespace; how often a waiter tries again.
_STORE_NAMESPACE = 0x6E656B73  # "neks"
_STORE_LOCK_POLL = 0.01


@contextmanager
def settled_transaction(character_id: int) -> Iterator[None]:
    """``settle_lock`` and ``transaction.atomic`` for a critical section that is one transaction.

    On PostgreSQL the settle lock is then taken transaction-scoped (``pg_advisory_xact_lock``, the
    same lock space as ``settle_lock``'s session lock, so the two exclude each other) as the
    transaction's first statement and released by its COMMIT or ROLLBACK: one round trip instead of
    a lock and an unlock, and no window where the lock is held with nothing written yet. On SQLite
    it is ``settle_lock``'s flock around the immediate transaction, in the usual order.

    Not for a caller that already holds the character's ``settle_lock`` (a second flock on SQLite
    would wait for the first): such a caller uses ``transaction.atomic`` directly.
    """
    if connection.vendor == "postgresql":
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_ADVISORY_NAMESPACE, character_id])
            yield
        return
    with settle_lock(character_id), transaction.atomic():
        yield


def settle_lock_source(character_id: int) -> tuple[str, list[object]]:
    """A FROM item that takes the settle lock transaction-scoped, for a one-statement write (PostgreSQL).

    Joined into the ``UPDATE`` of the character row, it is evaluated before the update reaches the
    row, so the statement takes the settle lock, then the row lock (this module's order), and holds
    both until it commits: ``settled_transaction`` and ``lock_character_update`` in one round trip.
    """
    if connection.vendor != "postgresql":
        raise RuntimeError("settle_lock_source is for PostgreSQL; elsewhere use settled_transaction")
    return "(SELECT pg_advisory_xact_lock(%s, %s)) AS settle", [_ADVISORY_NAMESPACE, character_id]


def wait_for_settled(name: str) -> Character | None:
    """Wait until no settle is in flight for the character, then return it (None when unknown).

    ``/new_dialog`` calls this so it always renders a settled state.
    """
    if connection.vendor == "postgresql":
        return _wait_for_settled_postgresql(name)
    known = instance_get(Character, by="name", value=name)
    if known is None:
        return None
    with settle_lock(known.pk):
        return instance_get(Character, by="id", value=known.pk)


def _wait_for_settled_postgresql(name: str) -> Character | None:
    """Two statements instead of four: the lookup by name takes the settle lock, and the read of the
    settled row releases it. Each statement reads its own snapshot, and the second one's is taken
    once the lock is held, so the row is the settled one. /new_dialog pays every round trip."""
    table = connection.ops.quote_name(Character._meta.db_table)
    key = "CAST(id AS integer)"  # the (int, int) lock space that settle_lock's parameters land in
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, pg_advisory_lock(%s, {key}) FROM {table} WHERE name = %s",
            [_ADVISORY_NAMESPACE, name],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    character_id = row[0]
    settled: list[Character] = []
    try:
        settled = list(
            Character.objects.raw(
                f"SELECT *, pg_advisory_unlock(%s, {key}) AS settle_released FROM {table} WHERE id = %s",
                [_ADVISORY_NAMESPACE, character_id],
            )
        )
    finally:
        if not settled:  # deleted meanwhile, or the read failed: the lock is still this session's
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [_ADVISORY_NAMESPACE, character_id])
    return settled[0] if settled else None
