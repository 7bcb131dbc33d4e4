from __future__ import annotations

from typing import Any, cast

import factory
from django.utils import timezone

from nekomem.subjects import subject_key_from_section
from persona.models import PersonaEntry, PersonaSection
from persona.services.records import text_sha256
from tests.characters.factories import CharacterFactory


class PersonaEntryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = PersonaEntry

    character = factory.SubFactory(CharacterFactory)
    section = "master"
    # An ``@subject/<key>`` section belongs to that group-chat subject, as import and the services set it.
    subject_key = factory.LazyAttribute(lambda o: subject_key_from_section(o.section))
    position = factory.Sequence(lambda n: n)
    entry_id = factory.Sequence(lambda n: f"manual_20260101000000_{n:08x}")
    text = factory.Sequence(lambda n: f"主人收藏了第{n}套邮票")
    source = "manual"
    created_at = factory.LazyFunction(timezone.now)


def make_entry(**fields: Any) -> PersonaEntry:
    """A saved PersonaEntry whose section row exists, typed as one (factory_boy's call is untyped)."""
    entry = cast(PersonaEntry, PersonaEntryFactory(**fields))
    PersonaSection.with_subjects.get_or_create(
        character=entry.character,
        key=entry.section,
        defaults={
            "position": {"master": 0, "neko": 1, "relationship": 2}.get(entry.section, 9),
            "subject_key": entry.subject_key,
        },
    )
    return entry


def cached_tokens_are_fresh(entry: PersonaEntry) -> bool:
    entry.refresh_from_db()
    return entry.token_count is not None and entry.token_count_text_sha256 == text_sha256(entry.text)
