from __future__ import annotations

from typing import Any

import factory
from django.utils import timezone

from nekomem.journal.models import Event, Job, OutboxOp
from tests.characters.factories import CharacterFactory


class EventFactory(factory.django.DjangoModelFactory[Event]):
    """An event row as an import or a crash leaves it: appended, not applied."""

    class Meta:
        model = Event

    character = factory.SubFactory(CharacterFactory)
    type = "fact.added"
    ts = factory.LazyFunction(timezone.now)
    payload = factory.Dict({})


class OutboxOpFactory(factory.django.DjangoModelFactory[OutboxOp]):
    """A pending outbox op; tests register a step for its ``type``."""

    class Meta:
        model = OutboxOp

    character = factory.SubFactory(CharacterFactory)
    type = "test_op"
    payload = factory.Dict({})


class JobFactory(factory.django.DjangoModelFactory[Job]):
    class Meta:
        model = Job

    character = factory.SubFactory(CharacterFactory)
    kind = "test.job"
    status = Job.Status.PENDING


def make_job(**fields: Any) -> Job:
    """A saved Job."""
    return JobFactory.create(**fields)
