"""``/new_dialog`` waits for a settle in flight (the per-character settle lock)."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from nekomem.characters.locks import settle_lock
from tests.characters.factories import CharacterFactory


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
    assert bodies and "小天的内心活动" in bodies[0].decode()


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
