from __future__ import annotations

from typing import Any, cast

import factory

from nekomem.journal.models import Job
from tests.characters.factories import CharacterFactory


class JobFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Job

    character = factory.SubFactory(CharacterFactory)
    kind = "test.job"
    status = Job.Status.PENDING


def make_job(**fields: Any) -> Job:
    """A saved Job, typed as one (factory_boy's call is untyped)."""
    return cast(Job, JobFactory(**fields))
