"""Compaction of the event log and the outbox (reference §2.13–2.14): seeds from the views in place of
the events past the history's retention (90 days; a live row keeps its last 5 versions, issue 49), done
ops dropped at 1 000 ops or 90 days; in the database and the files."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import transaction
from django.utils import timezone

from nekomem.journal.compaction import (
    EVENTS_COMPACT_LINES,
    HISTORY_KEEP_VERSIONS,
    HISTORY_RESCAN,
    OUTBOX_COMPACT_LINES,
    events_compact,
    history_retention,
    outbox_compact,
)
from nekomem.journal.models import AppliedSentinel, Event, OutboxOp, WorkStatus
from nekomem.journal.services import event_append, events_reconcile
from nekomem.journal.tasks import journal_compact_loop
from nekomem.portability import memory_export
from nekomem.runtime.schedules import registered_schedules
from persona.models import PersonaEntry
from reflections.models import Reflection
from tests.characters.factories import CharacterFactory
from tests.journal.factories import OutboxOpFactory
from tests.persona.factories import PersonaEntryFactory
from tests.reflections.factories import ReflectionFactory

pytestmark = pytest.mark.django_db


def applied_log(character, count: int, *, age: timedelta = timedelta(0)) -> None:
    """``count`` events, all applied (the sentinel at the last), ``age`` old."""
    with transaction.atomic():
        event_append(character_id=character.pk, event_type="fact.absorbed", payload={"fact_ids": []})
    when = timezone.now() - age
    Event.objects.bulk_create(
        Event(character=character, type="fact.absorbed", ts=when, payload={"fact_ids": []})
        for _ in range(count - 1)
    )
    Event.objects.filter(character=character).update(ts=when)
    last = Event.objects.filter(character=character).order_by("-seq").first()
    assert last is not None
    AppliedSentinel.objects.filter(character=character).update(
        last_applied_seq=last.seq, last_applied_event_id=last.event_id
    )


@pytest.fixture
def character():
    character = CharacterFactory.create()
    ReflectionFactory.create_batch(2, character=character)
    PersonaEntryFactory.create(character=character)
    return character


def test_ten_thousand_events_younger_than_the_retention_are_all_kept(character) -> None:
    applied_log(character, EVENTS_COMPACT_LINES)
    assert events_compact(character_id=character.pk) == (0, 0)
    assert Event.objects.filter(character=character).count() == EVENTS_COMPACT_LINES


def test_a_log_past_the_retention_becomes_seeds_from_the_views(character, tmp_path: Path) -> None:
    applied_log(character, EVENTS_COMPACT_LINES, age=timedelta(days=91))
    reflections = sorted(
        Reflection.objects.filter(character=character).values_list("reflection_id", flat=True)
    )
    entry = PersonaEntry.objects.get(character=character)

    assert events_compact(character_id=character.pk) == (EVENTS_COMPACT_LINES, 3)

    seeds = list(Event.objects.filter(character=character).order_by("seq"))
    assert all(e.seed for e in seeds)
    assert sorted(e.payload["id"] for e in seeds if e.type == "reflection.synthesized") == reflections
    assert [e.payload["entry"]["id"] for e in seeds if e.type == "persona.fact_added"] == [entry.entry_id]
    sentinel = AppliedSentinel.objects.get(character=character)
    assert (sentinel.last_applied_seq, sentinel.last_applied_event_id) == (seeds[-1].seq, seeds[-1].event_id)
    assert events_reconcile(character_id=character.pk).applied == 0  # the views hold the seeds already
    # Seeds do not count: nothing new, nothing to compact.
    assert events_compact(character_id=character.pk) == (0, 0)

    memory_export(character=character, folder=tmp_path)
    lines = (tmp_path / "events.ndjson").read_text().splitlines()
    assert [json.loads(line)["event_id"] for line in lines] == [str(e.event_id) for e in seeds]
    applied = json.loads((tmp_path / "events_applied.json").read_text())
    assert applied["last_applied_event_id"] == str(seeds[-1].event_id)


def test_a_shorter_log_is_kept_until_its_oldest_event_is_ninety_days_old(character) -> None:
    applied_log(character, 5, age=timedelta(days=89))
    assert events_compact(character_id=character.pk) == (0, 0)
    assert Event.objects.filter(character=character).count() == 5
    Event.objects.filter(character=character).update(ts=timezone.now() - timedelta(days=90, minutes=1))
    assert events_compact(character_id=character.pk) == (5, 3)


def test_a_character_without_views_to_seed_keeps_an_empty_log_and_no_sentinel() -> None:
    character = CharacterFactory.create()
    applied_log(character, 4, age=timedelta(days=91))
    assert events_compact(character_id=character.pk) == (4, 0)
    assert not Event.objects.filter(character=character).exists()
    sentinel = AppliedSentinel.objects.get(character=character)
    assert (sentinel.last_applied_seq, sentinel.last_applied_event_id) == (None, None)
    with transaction.atomic():  # the next event moves it again
        event = event_append(character_id=character.pk, event_type="fact.absorbed", payload={"fact_ids": []})
    assert AppliedSentinel.objects.get(character=character).last_applied_seq == event.seq


def test_a_log_with_events_not_yet_replayed_is_not_compacted(character) -> None:
    applied_log(character, 5, age=timedelta(days=120))
    Event.objects.create(
        character=character, type="fact.absorbed", ts=timezone.now(), payload={"fact_ids": []}
    )
    assert events_compact(character_id=character.pk) == (0, 0)
    assert Event.objects.filter(character=character).count() == 6


def test_done_ops_are_dropped_once_the_outbox_holds_a_thousand(character) -> None:
    now = timezone.now()
    OutboxOpFactory.create_batch(
        OUTBOX_COMPACT_LINES - 10, character=character, status=WorkStatus.DONE, finished_at=now
    )
    OutboxOpFactory.create_batch(5, character=character)
    OutboxOpFactory.create_batch(4, character=character, status=WorkStatus.DEAD, finished_at=now)
    assert outbox_compact(character_id=character.pk) == 0  # 999 ops: the file would not be compacted yet
    OutboxOpFactory.create(character=character, status=WorkStatus.WAITING)

    assert outbox_compact(character_id=character.pk) == OUTBOX_COMPACT_LINES - 10
    left = sorted(OutboxOp.objects.filter(character=character).values_list("status", flat=True))
    assert left == ["dead"] * 4 + ["pending"] * 5 + ["waiting"]


def test_done_ops_ninety_days_old_are_dropped_however_few(character) -> None:
    OutboxOpFactory.create(character=character, status=WorkStatus.DONE, finished_at=timezone.now())
    assert outbox_compact(character_id=character.pk) == 0
    OutboxOpFactory.create(
        character=character, status=WorkStatus.DONE, finished_at=timezone.now() - timedelta(days=91)
    )
    assert outbox_compact(character_id=character.pk) == 2


def test_a_schedule_compacts_every_character(character) -> None:
    spec = {s.name: s for s in registered_schedules()}["journal-compaction"]
    assert spec.func == "nekomem.journal.tasks.journal_compact_loop"
    applied_log(character, 3, age=timedelta(days=100))
    OutboxOpFactory.create(
        character=character, status=WorkStatus.DONE, finished_at=timezone.now() - timedelta(days=100)
    )
    journal_compact_loop()
    assert Event.objects.filter(character=character, seed=False).count() == 0
    assert Event.objects.filter(character=character, seed=True).count() == 3
    assert not OutboxOp.objects.filter(character=character).exists()


def versions(character, entry_id: str, count: int, *, age: timedelta) -> list[int]:
    """``count`` new versions of the persona entry ``entry_id``, ``age`` old, applied; their seqs."""
    with transaction.atomic():
        seqs = [
            event_append(
                character_id=character.pk,
                event_type="persona.entry_updated",
                payload={"section": "master", "entry": {"id": entry_id, "text": f"v{n}"}},
            ).seq
            for n in range(count)
        ]
    Event.objects.filter(seq__in=seqs).update(ts=timezone.now() - age)
    return seqs


def test_a_live_row_keeps_its_last_five_versions_however_old(character) -> None:
    entry = PersonaEntry.objects.get(character=character)
    seqs = versions(character, entry.entry_id, 7, age=timedelta(days=200))
    gone = versions(character, "entry-deleted-long-ago", 3, age=timedelta(days=200))

    dropped, seeds = events_compact(character_id=character.pk)

    assert (dropped, seeds) == (2 + 3, 3)
    kept = Event.objects.filter(character=character, seed=False).values_list("seq", flat=True)
    assert sorted(kept) == seqs[-HISTORY_KEEP_VERSIONS:]
    assert not set(gone) & set(kept)
    # Kept as versions, they do not make the next tick compact again.
    assert events_compact(character_id=character.pk) == (0, 0)


def test_the_retention_is_the_users_setting(character, settings) -> None:
    entry = PersonaEntry.objects.get(character=character)
    settings.HISTORY_RETENTION_DAYS = 7
    assert history_retention() == timedelta(days=7)
    versions(character, "row-without-a-view", 2, age=timedelta(days=8))
    young = versions(character, entry.entry_id, 2, age=timedelta(days=6))
    assert events_compact(character_id=character.pk) == (2, 3)
    assert (
        sorted(Event.objects.filter(character=character, seed=False).values_list("seq", flat=True)) == young
    )

    # A version past the retention that is not among the last five of its live row goes.
    many = versions(character, entry.entry_id, 6, age=timedelta(0))
    assert events_compact(character_id=character.pk, now=timezone.now() + timedelta(days=8)) == (
        3 + 3,  # the oldest of the eight past the retention, and the previous seeds
        3,
    )
    left = sorted(Event.objects.filter(character=character, seed=False).values_list("seq", flat=True))
    assert left == [*young, *many][-HISTORY_KEEP_VERSIONS:]


def test_a_shortened_retention_is_applied_by_the_next_days_compaction(character, settings) -> None:
    entry = PersonaEntry.objects.get(character=character)
    versions(character, entry.entry_id, 1, age=timedelta(0))
    assert events_compact(character_id=character.pk, force=True) == (0, 3)
    mid = versions(character, "a-row-no-longer-there", 2, age=timedelta(days=30))
    assert events_compact(character_id=character.pk) == (0, 0)  # younger than 90 days

    settings.HISTORY_RETENTION_DAYS = 14
    later = timezone.now() + HISTORY_RESCAN
    assert events_compact(character_id=character.pk, now=later) == (2 + 3, 3)
    assert not Event.objects.filter(seq__in=mid).exists()
