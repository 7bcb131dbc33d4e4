"""``instances_insert`` writes exactly the rows ``bulk_create`` writes (values prepared as ``save()``
prepares them: JSON, aware datetimes, booleans, ``auto_now_add`` stamps), only faster."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from facts.models import Fact
from nekomem.journal.models import Event
from nekomem.statements import insert_preparers, instances_insert, prepared_rows_insert
from recent.models import RawMessage, RecentMessage
from tests.characters.factories import CharacterFactory
from tests.facts.factories import FactFactory

pytestmark = pytest.mark.django_db


def stored(model, **where) -> list[dict]:
    rows = model.objects.filter(**where).order_by("pk")
    return [{k: v for k, v in model_to_dict(row).items() if k != "id"} for row in rows]


def test_facts_and_raw_rows_match_bulk_create() -> None:
    now = timezone.now()
    by_bulk, by_insert = CharacterFactory.create(), CharacterFactory.create()

    def facts(character) -> list[Fact]:
        return [
            FactFactory.build(
                character=character,
                text=text,
                fact_id=f"fact_20260101000000_{i:08d}",
                created_at=now,
                tags=["猫", "pets"],
                event_when_raw={"kind": "relative", "raw": "上周"},
                event_start_at=now - timedelta(days=7),
                absorbed=i % 2 == 0,
                extra={"subject_kind": "master", "note": '引号"和\\斜杠'},
            )
            for i, text in enumerate(["主人养了一只橘猫", "Master bakes bread on Sundays"])
        ]

    def raw(character) -> list[RawMessage]:
        return [
            RawMessage(
                character=character, session_id="s1", message='{"type": "human", "data": {}}', timestamp=now
            )
        ]

    Fact.objects.bulk_create(facts(by_bulk))
    RawMessage.objects.bulk_create(raw(by_bulk))
    instances_insert(Fact, facts(by_insert))
    instances_insert(RawMessage, raw(by_insert))

    def same(rows: list[dict], character) -> list[dict]:
        return [{**row, "character": character.pk} for row in rows]

    assert stored(Fact, character=by_insert) == same(stored(Fact, character=by_bulk), by_insert)
    assert stored(RawMessage, character=by_insert) == same(stored(RawMessage, character=by_bulk), by_insert)
    assert Fact.objects.get(character=by_insert, text="主人养了一只橘猫").extra["note"] == '引号"和\\斜杠'


def test_auto_now_add_stamps_are_filled() -> None:
    character = CharacterFactory.create()
    before = timezone.now()
    instances_insert(
        RecentMessage, [RecentMessage(character=character, position=1, type="human", data={"content": "嗨"})]
    )
    row = RecentMessage.objects.get(character=character)
    assert row.created_at >= before and row.data == {"content": "嗨"}


def _event_row(character_id: int, event_id: uuid.UUID) -> list:
    """One ``journal_event`` row as ``prepared_rows_insert`` takes it (values prepared, column order)."""
    values = {
        "event_id": event_id,
        "character_id": character_id,
        "type": "memory.version",
        "ts": timezone.now(),
        "payload": {"pk": 1, "fields": {"text": "主人养了一只橘猫"}},
        "seed": False,
        "cause": "edit",
        "source": "rest:abc",
        "layer": "facts",
        "row": "fact_1",
    }
    return [
        field.get_db_prep_save(values[field.attname], connection) if prepare else values[field.attname]
        for field, prepare in insert_preparers(Event)
    ]


def test_a_prepared_insert_in_a_transaction_is_seen_and_fails_as_the_orms_would() -> None:
    """Inside a transaction the SQLite insert skips Django's cursor only while nothing watches: a query log
    (a test counting statements) still sees it, and a duplicate is Django's IntegrityError either way,
    leaving the transaction to roll back."""
    character = CharacterFactory.create()
    event_id = uuid.uuid4()
    with transaction.atomic():
        prepared_rows_insert(Event, [_event_row(character.pk, event_id)])
        with CaptureQueriesContext(connection) as seen:
            prepared_rows_insert(Event, [_event_row(character.pk, uuid.uuid4())])
        assert [q["sql"] for q in seen.captured_queries if 'INTO "journal_event"' in q["sql"]]
    stored = Event.objects.get(event_id=event_id)
    assert stored.payload == {"pk": 1, "fields": {"text": "主人养了一只橘猫"}} and stored.row == "fact_1"
    for watched in (False, True):
        with pytest.raises(IntegrityError), transaction.atomic():
            if watched:
                with CaptureQueriesContext(connection):
                    prepared_rows_insert(Event, [_event_row(character.pk, event_id)])
            else:
                prepared_rows_insert(Event, [_event_row(character.pk, event_id)])
    assert Event.objects.filter(character=character).count() == 2
