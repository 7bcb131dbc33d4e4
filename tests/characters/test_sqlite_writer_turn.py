"""The embedded default's writers queue for their turn in the kernel (``sqlite_writer_turn``).

A writer that finds another one mid-transaction must wait for the turn, not for SQLite's busy
handler: each test below fails when ``BEGIN IMMEDIATE`` runs without the turn.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable

import pytest
from django.db import OperationalError, connection, connections, transaction

from nekomem.characters.models import Character
from nekomem.sqlite_backend.turnstile import WriterTurnTimeout, sqlite_writer_turn, sqlite_writer_turn_release
from tests.characters.factories import CharacterFactory
from tests.support.waits import WRITER_TURN_WAIT, LockWaitProbe

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="the writer turn is the embedded default's (SQLite)"
)


def _turn_is_free() -> bool:
    fd = os.open(f"{connection.settings_dict['NAME']}.writers", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def _turn_comes_free(within: float = 5.0) -> bool:
    """The turn is free now or soon: another test's leftover thread may write for a moment, but a
    turn kept by a forked child stays taken until the test lets the child go."""
    deadline = time.monotonic() + within
    while not _turn_is_free():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _in_thread(work: Callable[[], None]) -> tuple[threading.Thread, list[BaseException]]:
    failures: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as failure:  # handed to the test thread
            failures.append(failure)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, failures


@pytest.mark.django_db(transaction=True)
def test_a_second_writer_waits_for_the_turn_not_for_sqlites_lock():
    character = CharacterFactory.create(name="Mika")
    holding, release = threading.Event(), threading.Event()

    def first_writer() -> None:
        with transaction.atomic():
            Character.objects.filter(pk=character.pk).update(master_name="先")
            holding.set()
            release.wait(timeout=30)

    refused = LockWaitProbe(WRITER_TURN_WAIT)

    def second_writer() -> None:
        refused.install()
        # No busy handler: had this writer reached BEGIN IMMEDIATE while the first one held the
        # database, SQLite would refuse it at once ("database is locked").
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA busy_timeout = 0")
        with transaction.atomic():
            Character.objects.filter(pk=character.pk).update(master_name="后")

    first, first_failures = _in_thread(first_writer)
    assert holding.wait(timeout=10)
    assert not _turn_is_free()
    second, second_failures = _in_thread(second_writer)
    assert refused.wait(), "the second writer was never refused the turn while the first one held it"
    assert second.is_alive() and not second_failures, "the second writer did not wait for the turn"
    release.set()
    first.join(timeout=10)
    second.join(timeout=10)
    assert not first_failures and not second_failures, first_failures + second_failures
    assert Character.objects.get(pk=character.pk).master_name == "后"
    assert _turn_is_free()


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_transaction_gives_the_turn_back():
    character = CharacterFactory.create()
    with pytest.raises(RuntimeError), transaction.atomic():
        Character.objects.filter(pk=character.pk).update(master_name="gone")
        assert not _turn_is_free()
        raise RuntimeError("the caller gives up")
    assert _turn_is_free()
    assert Character.objects.get(pk=character.pk).master_name != "gone"


@pytest.mark.django_db(transaction=True)
def test_a_writer_that_waits_too_long_fails_as_sqlite_does_and_the_turn_is_not_lost():
    database = connection.settings_dict["NAME"]
    held = sqlite_writer_turn(database, timeout=1)
    try:
        with pytest.raises(WriterTurnTimeout):
            sqlite_writer_turn(database, timeout=0.2)
        # Through Django: the timeout is the database's, the error the one SQLite's lock gives.
        options = connection.settings_dict["OPTIONS"]
        connection.settings_dict["OPTIONS"] = {**options, "timeout": 0.2}
        try:
            with pytest.raises(OperationalError, match="database is locked"), transaction.atomic():
                pass
        finally:
            connection.settings_dict["OPTIONS"] = options
    finally:
        sqlite_writer_turn_release(database, held)
    assert _turn_is_free()  # the writers that gave up hold nothing
    with transaction.atomic():
        CharacterFactory.create()


@pytest.mark.django_db(transaction=True)
def test_a_forked_child_does_not_keep_its_parents_turn():
    read_end, write_end = os.pipe()
    with transaction.atomic():
        CharacterFactory.create()
        child = os.fork()
        if child == 0:  # pragma: no cover - the child only waits to be told to go
            os.close(write_end)
            os.read(read_end, 1)
            os._exit(0)
    os.close(read_end)
    try:
        assert _turn_comes_free(), "the turn stayed with the child the parent forked mid-transaction"
    finally:
        os.write(write_end, b"x")
        os.close(write_end)
        os.waitpid(child, 0)


@pytest.mark.django_db(transaction=True)
def test_a_holder_killed_mid_transaction_gives_the_turn_back():
    database = connection.settings_dict["NAME"]
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child takes the turn, says so, and waits to be killed
        os.close(read_end)
        sqlite_writer_turn(database, timeout=5)
        os.write(write_end, b"x")
        time.sleep(60)
        os._exit(0)
    os.close(write_end)
    try:
        assert os.read(read_end, 1) == b"x"
        with pytest.raises(WriterTurnTimeout):
            sqlite_writer_turn(database, timeout=0.1)
        os.kill(child, 9)  # no COMMIT, no wake: the kernel gives the lock back
        os.waitpid(child, 0)
        held = sqlite_writer_turn(database, timeout=5)
        sqlite_writer_turn_release(database, held)
    finally:
        os.close(read_end)
        try:
            os.kill(child, 9)
            os.waitpid(child, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
