"""``/new_dialog`` waits for a settle in flight (the per-character settle lock)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from nekomem.characters.locks import settle_lock, wait_for_settled
from nekomem.characters.models import Character
from tests.characters.factories import CharacterFactory
from tests.support.waits import SETTLE_LOCK_WAIT, LockWaitProbe


@pytest.mark.django_db(transaction=True)
def test_new_dialog_blocks_until_the_settle_lock_is_released(client):
    character = CharacterFactory.create(name="小天")
    holding = threading.Event()
    release = threading.Event()

    def settle_in_flight() -> None:
        try:
            with settle_lock(character.pk):
                holding.set()
                release.wait(timeout=30)
        finally:
            connection.close()

    holder = threading.Thread(target=settle_in_flight)
    holder.start()
    assert holding.wait(timeout=10)

    answered = threading.Event()
    bodies: list[bytes] = []

    def ask() -> None:
        try:
            bodies.append(client.get("/new_dialog/小天").content)
            answered.set()
        finally:
            connection.close()

    reader = threading.Thread(target=ask)
    reader.start()
    assert not answered.wait(timeout=1.0), "new_dialog answered while a settle held the lock"
    release.set()
    assert answered.wait(timeout=10)
    holder.join(timeout=10)
    reader.join(timeout=10)
    assert bodies and "以下是小天的内心活动" in bodies[0].decode()


@pytest.mark.django_db(transaction=True)
def test_settle_locks_of_two_characters_do_not_wait_for_each_other():
    one, two = CharacterFactory.create(), CharacterFactory.create()
    with settle_lock(one.pk):
        acquired = threading.Event()

        def other() -> None:
            try:
                with settle_lock(two.pk):
                    acquired.set()
            finally:
                connection.close()

        thread = threading.Thread(target=other)
        thread.start()
        assert acquired.wait(timeout=10)
        thread.join()


def _in_thread(work) -> threading.Thread:
    def run() -> None:
        try:
            work()
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
def test_the_character_is_read_once_the_settle_in_flight_has_committed():
    """The row comes from a read made after the lock was granted: a lookup that took the lock and
    read the row in one statement would return the row as it was before the settle."""
    character = CharacterFactory.create(name="Mel", master_name="before")
    holding, release = threading.Event(), threading.Event()

    def settle_in_flight() -> None:
        with settle_lock(character.pk):
            holding.set()
            release.wait(timeout=30)
            Character.objects.filter(pk=character.pk).update(master_name="after")

    holder = _in_thread(settle_in_flight)
    assert holding.wait(timeout=10)
    seen: list[Character | None] = []
    waiting = LockWaitProbe(SETTLE_LOCK_WAIT)

    def read() -> None:
        waiting.install()
        seen.append(wait_for_settled("Mel"))

    reader = _in_thread(read)
    assert waiting.wait(), "the reader never reached the settle lock"
    assert not seen, "the reader must wait for the settle in flight"
    release.set()
    holder.join(timeout=10)
    reader.join(timeout=10)
    assert seen and seen[0] is not None and seen[0].master_name == "after"


@pytest.mark.django_db(transaction=True)
def test_waiting_for_a_settle_leaves_the_lock_free():
    CharacterFactory.create(name="Mel")
    character = wait_for_settled("Mel")
    assert character is not None and character.name == "Mel"
    assert wait_for_settled("nobody") is None
    taken = threading.Event()

    def settle() -> None:
        with settle_lock(character.pk):
            taken.set()

    # From another connection: a lock this session still held would keep it waiting.
    _in_thread(settle).join(timeout=10)
    assert taken.is_set()
