from __future__ import annotations

import factory
from django.utils import timezone

from nekomem.characters.models import Character, CharacterRelease


class CharacterFactory(factory.django.DjangoModelFactory[Character]):
    """``CharacterFactory.create(...)`` is typed as returning a Character."""

    class Meta:
        model = Character
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"角色{n}")
    master_name = "阿凛"


class CharacterReleaseFactory(factory.django.DjangoModelFactory[CharacterRelease]):
    """A ``/release_character`` in progress."""

    class Meta:
        model = CharacterRelease

    name = factory.Sequence(lambda n: f"角色{n}")
    started_at = factory.LazyFunction(timezone.now)
