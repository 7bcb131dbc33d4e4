"""``instances_insert`` writes exactly the rows ``bulk_create`` writes (values prepared as ``save()``
prepares them: JSON, aware datetimes, booleans, ``auto_now_add`` stamps), only faster."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.forms.models import model_to_dict
from django.utils import timezone

from facts.models import Fact
from nekomem.statements import instances_insert
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
