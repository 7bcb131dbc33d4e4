"""The only module that builds locking queries.

A per-character lock serialises every change to one character's memory (the original's
"settle lock"). On PostgreSQL it is a row lock on the character; on SQLite every write
transaction is BEGIN IMMEDIATE (see settings), so the database write lock already serialises
writers and the row lock is a plain read. Always call these inside ``transaction.atomic``.
Lock order: character first, then any layer rows, each ordered by primary key.
"""

from __future__ import annotations

from django.db import connection, transaction

from nekomem.characters.models import Character


def lock_character(character_id: int) -> Character:
    """Lock one character row until the surrounding transaction ends."""
    if not connection.in_atomic_block:
        raise RuntimeError("lock_character must be called inside transaction.atomic")
    return Character.objects.select_for_update().get(pk=character_id)


def lock_character_by_name(name: str) -> Character | None:
    if not connection.in_atomic_block:
        raise RuntimeError("lock_character_by_name must be called inside transaction.atomic")
    return Character.objects.select_for_update().filter(name=name).first()


def wait_for_settled(name: str) -> Character | None:
    """Wait until no writer holds the character's lock, then return it (None when unknown).

    ``/new_dialog`` calls this so it always renders a settled state.
    """
    with transaction.atomic():
        return lock_character_by_name(name)
