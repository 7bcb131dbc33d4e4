from __future__ import annotations

from typing import Any

import factory
from django.utils import timezone

from facts.models import Fact
from facts.services.records import fact_hash, fact_id_for
from tests.characters.factories import CharacterFactory


class FactFactory(factory.django.DjangoModelFactory[Fact]):
    class Meta:
        model = Fact

    character = factory.SubFactory(CharacterFactory)
    text = factory.Sequence(lambda n: f"主人喜欢第{n}种水果")
    importance = 6
    entity = Fact.Entity.MASTER
    source = Fact.Source.USER_OBSERVATION
    created_at = factory.LazyFunction(timezone.now)
    hash = factory.LazyAttribute(lambda o: fact_hash(o.text))
    fact_id = factory.LazyAttribute(lambda o: fact_id_for(created_at=o.created_at, hash_=o.hash))
    event_start_at = factory.LazyAttribute(lambda o: o.created_at)
    signal_processed = False


def make_fact(**fields: Any) -> Fact:
    """A saved Fact (the same as ``FactFactory.create``)."""
    return FactFactory.create(**fields)
