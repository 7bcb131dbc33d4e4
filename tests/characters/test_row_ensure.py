"""``character_row_ensure``: a character's one row of a model, locked, made once on first use."""

from __future__ import annotations

from datetime import datetime

import pytest
from django.db import OperationalError, transaction
from django.utils import timezone

from nekomem.characters.locks import character_row_ensure, lock_character, lock_rows
from reflections.models import ReflectionCursor
from tests.characters.factories import CharacterFactory
from tests.support.concurrency import (
    create_while_locked,
    lock_timeout,
    on_own_connection,
    postgresql_only,
    wait_until_waiting,
)

T0 = timezone.make_aware(datetime(2024, 5, 1, 12, 0, 0))


def test_outside_a_transaction_it_refuses():
    with pytest.raises(RuntimeError, match=r"inside transaction\.atomic"):
        character_row_ensure(ReflectionCursor, 1)


@pytest.mark.django_db
def test_a_missing_row_is_made_with_the_defaults_and_an_existing_one_kept():
    character = CharacterFactory.create()
    with transaction.atomic():
        made = character_row_ensure(ReflectionCursor, character.pk, {"rebuttal_checked_until": T0})
    with transaction.atomic():
        again = character_row_ensure(ReflectionCursor, character.pk, {"rebuttal_checked_until": None})

    assert made.rebuttal_checked_until == T0
    assert (again.pk, again.rebuttal_checked_until) == (made.pk, T0)
    assert ReflectionCursor.objects.filter(character=character).count() == 1


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_an_existing_row_comes_back_locked_without_the_character_lock():
    character = CharacterFactory.create()
    ReflectionCursor.objects.create(character=character)

    def try_lock(what):
        def attempt():
            with transaction.atomic(), lock_timeout(200):
                what()
            return "locked"

        return attempt

    with transaction.atomic():
        character_row_ensure(ReflectionCursor, character.pk)
        row = on_own_connection(try_lock(lambda: list(lock_rows(ReflectionCursor.objects.all())))).outcome()
        owner = on_own_connection(try_lock(lambda: lock_character(character.pk))).outcome()

    assert isinstance(row, OperationalError) and "lock timeout" in str(row)
    assert owner == "locked"


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_two_creators_waiting_on_the_lock_make_one_row():
    character = CharacterFactory.create()

    def ensure() -> int:
        with transaction.atomic():
            return character_row_ensure(ReflectionCursor, character.pk).pk

    with transaction.atomic():
        lock_character(character.pk)
        first, second = on_own_connection(ensure), on_own_connection(ensure)
        both_waited = wait_until_waiting(lambda: first.pid) and wait_until_waiting(lambda: second.pid)

    assert both_waited
    assert first.join() == second.join()
    assert ReflectionCursor.objects.filter(character=character).count() == 1


@postgresql_only
@pytest.mark.django_db(transaction=True)
def test_a_creator_arriving_while_a_holder_inserts_the_row_gets_the_holders_row():
    # The holder inserts with a plain create, as a lock holder may: the creator must queue behind it
    # instead of inserting too (which deadlocked at COMMIT on the deferred foreign-key check).
    character = CharacterFactory.create()

    def ensure() -> datetime | None:
        with transaction.atomic():
            return character_row_ensure(ReflectionCursor, character.pk).rebuttal_checked_until

    raced = create_while_locked(
        character_id=character.pk,
        create=ensure,
        then=lambda: ReflectionCursor.objects.create(character=character, rebuttal_checked_until=T0).pk,
    )

    assert raced.creator_waited and raced.errors == []
    assert raced.created == T0
    assert list(ReflectionCursor.objects.filter(character=character).values_list("pk", flat=True)) == [
        raced.held
    ]
