from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import transaction

from nekomem.journal import registry, services
from nekomem.journal.events import EVENT_TYPES, UnknownEventType
from nekomem.journal.models import AppliedSentinel, Event
from tests.characters.factories import CharacterFactory
from tests.journal.factories import EventFactory

pytestmark = pytest.mark.django_db


def append(character_id: int, event_type: str, payload: dict) -> Event:
    with transaction.atomic():
        return services.event_append(character_id=character_id, event_type=event_type, payload=payload)


def sentinel_seq(character_id: int) -> int | None:
    return AppliedSentinel.objects.get(character_id=character_id).last_applied_seq


@pytest.fixture
def applied():
    """A handler for fact.added that records what it re-applies."""
    seen: list[dict] = []
    previous = registry.event_handler_for("fact.added")
    registry.register_event_handler("fact.added", lambda cid, payload: seen.append(payload))
    yield seen
    if previous is not None:
        registry.register_event_handler("fact.added", previous)
    else:
        registry._event_handlers.pop("fact.added", None)


def test_there_are_exactly_fifteen_types_and_others_are_refused():
    assert len(EVENT_TYPES) == 15
    with pytest.raises(UnknownEventType):
        append(CharacterFactory.create().pk, "fact.exploded", {})
    assert Event.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_append_needs_the_view_transaction():
    with pytest.raises(RuntimeError):
        services.event_append(character_id=CharacterFactory.create().pk, event_type="fact.added", payload={})


def test_append_moves_the_sentinel_with_the_view_change():
    character = CharacterFactory.create()
    first = append(character.pk, "fact.added", {"id": "fact_1"})
    second = append(character.pk, "fact.absorbed", {"id": "fact_1"})
    assert sentinel_seq(character.pk) == second.seq > first.seq
    assert services.events_reconcile().applied == 0


def test_reconcile_replays_only_events_after_the_sentinel_and_is_idempotent(applied):
    character = CharacterFactory.create()
    append(character.pk, "fact.added", {"id": "fact_1"})
    # Events that arrive without being applied (an import, or a crash between two steps).
    late = [
        EventFactory.create(
            character=character, ts=Event.objects.earliest("seq").ts, payload={"id": f"fact_{i}"}
        )
        for i in (2, 3)
    ]
    call_command("reconcile", verbosity=0)
    assert [p["id"] for p in applied] == ["fact_2", "fact_3"]
    assert sentinel_seq(character.pk) == late[-1].seq
    call_command("reconcile", verbosity=0)
    assert len(applied) == 2


@pytest.fixture
def unhandled_type():
    """Every event type has a handler once all layers are installed: take one away for the test."""
    event_type = "correction.queued"
    previous = registry._event_handlers.pop(event_type, None)
    yield event_type
    if previous is not None:
        registry.register_event_handler(event_type, previous)


def test_reconcile_pauses_at_a_type_without_a_handler(applied, unhandled_type):
    character = CharacterFactory.create()
    append(character.pk, "fact.added", {"id": "fact_1"})
    ts = Event.objects.earliest("seq").ts
    stuck = EventFactory.create(character=character, type=unhandled_type, ts=ts)
    EventFactory.create(character=character, ts=ts, payload={"id": "fact_9"})
    report = services.events_reconcile()
    assert report.applied == 0 and str(character.pk) in report.paused
    assert applied == []
    assert sentinel_seq(character.pk) == stuck.seq - 1


def test_the_sentinel_never_moves_backwards():
    character = CharacterFactory.create()
    older = append(character.pk, "fact.added", {"id": "a"})
    newer = append(character.pk, "fact.added", {"id": "b"})
    with transaction.atomic():
        assert services._sentinel_advance(character_id=character.pk, event=older) is False
    assert sentinel_seq(character.pk) == newer.seq


def test_characters_do_not_share_sentinels(applied):
    one, two = CharacterFactory.create(), CharacterFactory.create()
    append(one.pk, "fact.added", {"id": "x"})
    EventFactory.create(character=two, ts=Event.objects.earliest("seq").ts, payload={"id": "y"})
    services.events_reconcile(character_id=one.pk)
    assert applied == []
    services.events_reconcile(character_id=two.pk)
    assert [p["id"] for p in applied] == ["y"]
