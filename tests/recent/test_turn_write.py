"""The turn write itself: the one-statement path (PostgreSQL) and the ORM path write the same rows."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from nekomem.characters.models import Character
from nekomem.characters.services import character_id_for
from nekomem.journal.models import OutboxOp
from recent.messages import parse_history
from recent.models import RawMessage, RecentMessage, RecentWindowState
from recent.services import recent_window_replace, turn_record
from tests.characters.factories import CharacterFactory
from tests.conftest import history

pytestmark = pytest.mark.django_db


def turn(*pairs: tuple[str, str]) -> list[dict]:
    return parse_history(history(*pairs))


def stored(name: str) -> dict:
    """Everything a turn writes, without ids and clocks."""
    character = Character.objects.get(name=name)
    return {
        "window": list(
            RecentMessage.objects.filter(character=character)
            .order_by("position")
            .values_list("position", "type", "data")
        ),
        "raw": [
            (message, session)
            for message, session in RawMessage.objects.filter(character=character)
            .order_by("id")
            .values_list("message", "session_id")
        ],
        "ops": list(
            OutboxOp.objects.filter(character=character)
            .order_by("created_at")
            .values_list("type", "payload", "status", "attempts")
        ),
        "character": Character.objects.filter(pk=character.pk)
        .values_list("language", "raw_rows_written")
        .get(),
        "window_state": RecentWindowState.objects.filter(pk=character.pk)
        .values_list("review_clean", "next_position")
        .get(),
    }


def normalised(state: dict) -> dict:
    sessions: dict[str, int] = {}
    state["raw"] = [
        (message, sessions.setdefault(session, len(sessions))) for message, session in state["raw"]
    ]
    for index, (kind, payload, status, attempts) in enumerate(state["ops"]):
        payload = dict(payload)
        payload["session_id"] = sessions[payload["session_id"]]
        state["ops"][index] = (kind, payload, status, attempts)
    return state


@pytest.mark.parametrize("clock", ["database", "server"])
def test_the_statement_path_writes_exactly_what_the_orm_path_writes(settings, clock):
    """PostgreSQL: one statement, or with the server's clock hand-built statements in one
    transaction; SQLite: hand-built statements in one transaction."""
    from nekomem.characters.locks import settled_transaction
    from recent.services.turn_write import turn_write_orm

    settings.NEKOMEM_RAW_LOG_CLOCK = clock
    turns = [turn(("human", "今天去爬山了"), ("ai", "累不累？")), turn(("human", "还好"), ("ai", "那就好"))]
    CharacterFactory.create(name="statement")
    CharacterFactory.create(name="orm")
    for messages in turns:
        turn_record(name="statement", messages=messages, language="zh")
        character_id = character_id_for(name="orm")
        with settled_transaction(character_id):
            turn_write_orm(character_id=character_id, messages=messages, language="zh", append_recent=True)
    statement, orm = normalised(stored("statement")), normalised(stored("orm"))
    assert statement == orm
    assert [p for p, _t, _d in statement["window"]] == [0, 1, 2, 3]
    assert (statement["character"], statement["window_state"]) == (("zh", 4), (False, 4))


def test_positions_come_from_the_counter_and_only_grow():
    turn_record(name="counter", messages=turn(("human", "一"), ("ai", "二")), language=None)
    character = Character.objects.get(name="counter")
    recent_window_replace(character_id=character.pk, chat=[("human", "改过的")], expected_fingerprint=None)
    turn_record(name="counter", messages=turn(("human", "三"), ("ai", "四")), language=None)
    window = list(RecentMessage.objects.filter(character=character).order_by("position"))
    assert [m.data["content"] for m in window] == ["改过的", "三", "四"]
    assert [m.position for m in window] == [2, 3, 4]
    assert RecentWindowState.objects.get(character=character).next_position == 5


def test_a_turn_for_a_deleted_and_recreated_character_goes_to_the_new_one():
    turn_record(name="phoenix", messages=turn(("human", "first life"), ("ai", "hi")), language="en")
    old_id = Character.objects.get(name="phoenix").pk
    Character.objects.filter(pk=old_id).delete()  # the id stays cached in this process
    CharacterFactory.create(name="decoy")  # may take a reused id on SQLite
    new_id = turn_record(
        name="phoenix", messages=turn(("human", "second life"), ("ai", "hello")), language="en"
    ).character_id
    assert new_id != old_id and Character.objects.get(name="phoenix").pk == new_id
    window = RecentMessage.objects.filter(character_id=new_id).order_by("position")
    assert [m.data["content"] for m in window] == ["second life", "hello"]
    assert not RecentMessage.objects.filter(character__name="decoy").exists()


def test_a_history_too_large_for_one_statement_is_written_whole_through_the_orm(client):
    from recent.services.turn_write import STATEMENT_MAX_MESSAGES

    count = STATEMENT_MAX_MESSAGES * 10
    pairs = [("human" if i % 2 == 0 else "ai", f"消息 {i}") for i in range(count)]
    turn_record(name="big", messages=turn(*pairs), language="zh")
    turn_record(name="big", messages=turn(("human", "之后"), ("ai", "嗯")), language="zh")
    window = list(RecentMessage.objects.filter(character__name="big").order_by("position"))
    assert [m.data["content"] for m in window] == [text for _kind, text in pairs] + ["之后", "嗯"]
    assert [m.position for m in window] == list(range(count + 2))
    assert RawMessage.objects.filter(character__name="big").count() == count + 2
    assert OutboxOp.objects.filter(character__name="big").count() == 2


# Far from the real now, so a stamp from the database's clock cannot pass for it.
TRAVELLED = datetime(2031, 3, 14, 21, 30, tzinfo=UTC)


def raw_stamps(name: str) -> set[datetime]:
    return set(RawMessage.objects.filter(character__name=name).values_list("timestamp", flat=True))


def test_with_the_server_clock_the_raw_log_is_stamped_with_the_servers_simulated_time(settings):
    settings.NEKOMEM_RAW_LOG_CLOCK = "server"
    with time_machine.travel(TRAVELLED, tick=False):
        turn_record(name="simulated", messages=turn(("human", "早"), ("ai", "早安")), language="zh")
    assert raw_stamps("simulated") == {TRAVELLED}
    assert OutboxOp.objects.filter(character__name="simulated").count() == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the one-statement turn: PostgreSQL")
def test_with_the_database_clock_the_raw_log_is_stamped_with_the_databases_now(settings):
    settings.NEKOMEM_RAW_LOG_CLOCK = "database"
    before = timezone.now()
    with time_machine.travel(TRAVELLED, tick=False):
        turn_record(name="real", messages=turn(("human", "早"), ("ai", "早安")), language="zh")
    after = timezone.now()
    (stamp,) = raw_stamps("real")
    assert before <= stamp <= after
