"""A version taken from the rows the writer holds as it saved them is the version a re-read would record
(issue 49: the edits skip that read), byte for byte, on every layer that hands its rows over."""

from __future__ import annotations

import json
import uuid
from typing import cast

import pytest
from django.db import connection, transaction
from django.utils import timezone

from facts.models import RECALL_POOL as FACT_POOL
from facts.models import Fact
from facts.services import fact_update
from facts.services.history import fact_version_fields
from nekomem.characters.models import Character
from nekomem.journal.causes import change_cause, change_detail
from nekomem.journal.events import VERSION_EVENT
from nekomem.journal.models import Event
from nekomem.journal.versions import versions_record
from persona.models import CHANGE_POOL, PersonaEntry
from persona.services import persona_entry_create, persona_entry_edit
from reflections.models import RECALL_POOL as REFLECTION_POOL
from reflections.models import Reflection
from reflections.services import reflection_edit
from tests.characters.factories import CharacterFactory
from tests.history.support import fact_by_text, facts_added

pytestmark = pytest.mark.django_db


@pytest.fixture
def character() -> Character:
    return cast(Character, CharacterFactory(name="小天", master_name="阿凛"))


def _last_two(character_id: int, layer: str) -> tuple[str, str]:
    """The stored payloads (as the database returns them) of the layer's last two versions."""
    rows = Event.objects.filter(character_id=character_id, type=VERSION_EVENT, layer=layer).order_by("-seq")
    held, reread = [json.dumps(e.payload, ensure_ascii=False) for e in rows[:2]][::-1]
    return held, reread


def _reread(character_id: int, pool: str, pk: int) -> None:
    with transaction.atomic():
        versions_record(character_id, pool, [pk])  # no rows held: the fallback reads them


def test_a_fact_edits_version_is_the_one_a_re_read_records(character):
    facts_added(character.pk, "阿凛喜欢猫")
    fact = fact_by_text(character.pk, "阿凛喜欢猫")
    fact_update(character_id=character.pk, fact_id=fact.fact_id, importance=9, text="阿凛很喜欢猫")
    _reread(character.pk, FACT_POOL, fact.pk)
    held, reread = _last_two(character.pk, "facts")
    assert held == reread and '"importance": 9' in held and "阿凛很喜欢猫" in held


def test_a_persona_entry_edits_version_is_the_one_a_re_read_records(character):
    persona_entry_create(character_id=character.pk, entity="master", text="阿凛早上喝咖啡")
    entry = PersonaEntry.objects.get(character=character)
    persona_entry_edit(character_id=character.pk, entry_id=entry.entry_id, text="阿凛早上喝茶")
    _reread(character.pk, CHANGE_POOL, entry.pk)
    held, reread = _last_two(character.pk, "persona")
    assert held == reread and "阿凛早上喝茶" in held


def test_a_reflection_edits_version_is_the_one_a_re_read_records(character):
    reflection = Reflection.objects.create(
        character=character,
        reflection_id="ref_held_0001",
        text="阿凛似乎喜欢绿茶",
        entity="master",
        created_at=timezone.now(),
    )
    reflection_edit(character_id=character.pk, reflection_id=reflection.reflection_id, text="阿凛喜欢红茶")
    _reread(character.pk, REFLECTION_POOL, reflection.pk)
    held, reread = _last_two(character.pk, "reflections")
    assert held == reread and "阿凛喜欢红茶" in held


def test_a_held_row_that_is_partial_or_someone_elses_is_read_back(character):
    facts_added(character.pk, "阿凛喜欢猫")
    pk = fact_by_text(character.pk, "阿凛喜欢猫").pk
    partial = Fact.with_subjects.only("pk", "character_id", "fact_id").get(pk=pk)
    partial.text = "not what the row says"
    stranger = Fact.with_subjects.get(pk=pk)
    stranger.character_id = character.pk + 1000
    stranger.text = "not what the row says either"
    with transaction.atomic():
        versions_record(character.pk, FACT_POOL, [pk], [partial, stranger])
    last = Event.objects.filter(character=character, type=VERSION_EVENT, layer="facts").latest("seq")
    assert last.payload["fields"]["text"] == "阿凛喜欢猫"


def test_an_event_insert_maintains_only_the_indexes_a_read_needs():
    """Issue 49's write budget: every index is a page each version's insert dirties. The migrated table
    (either database) keeps the replay's (character, seq), a row's versions and an undo's source, and
    neither the ForeignKey's own index nor a timeline index (the timeline scans (character, seq))."""
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, Event._meta.db_table)
    indexed = sorted(
        tuple(spec["columns"])
        for spec in constraints.values()
        if spec["index"] and not spec["primary_key"] and not spec["unique"]
    )
    assert indexed == [
        ("character_id", "layer", "row", "seq"),
        ("character_id", "seq"),
        ("character_id", "source"),
    ]


def test_a_version_row_holds_what_the_orm_would_have_written(character):
    facts_added(character.pk, "阿凛喜欢猫")
    fact = fact_by_text(character.pk, "阿凛喜欢猫")
    before = timezone.now()
    with transaction.atomic(), change_cause("refine") as source, change_detail("merge"):
        versions_record(character.pk, FACT_POOL, [fact.pk], [fact])
    event = Event.objects.filter(character=character, type=VERSION_EVENT).latest("seq")
    assert (event.cause, event.source, event.layer, event.row, event.seed) == (
        "refine",
        source,
        "facts",
        fact.fact_id,
        False,
    )
    assert event.payload == {"pk": fact.pk, "fields": fact_version_fields(fact), "detail": "merge"}
    assert before <= event.ts <= timezone.now()
    assert isinstance(event.event_id, uuid.UUID)
    assert Event.objects.filter(event_id=event.event_id).count() == 1
