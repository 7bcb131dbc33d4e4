from __future__ import annotations

from typing import Any, cast

import factory
from django.utils import timezone

from reflections.models import Reflection
from reflections.services.records import reflection_id_for
from tests.characters.factories import CharacterFactory


class ReflectionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Reflection

    character = factory.SubFactory(CharacterFactory)
    text = factory.Sequence(lambda n: f"主人似乎很喜欢第{n}种爱好")
    source_fact_ids = factory.Sequence(lambda n: [f"fact_20240501120000_{n:08x}"])
    reflection_id = factory.LazyAttribute(lambda o: reflection_id_for(o.source_fact_ids))
    entity = Reflection.Entity.MASTER
    status = Reflection.Status.PENDING
    created_at = factory.LazyFunction(timezone.now)


def make_reflection(**fields: Any) -> Reflection:
    """A saved Reflection, typed as one (factory_boy's call is untyped)."""
    return cast(Reflection, ReflectionFactory(**fields))
