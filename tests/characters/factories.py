from __future__ import annotations

import factory

from nekomem.characters.models import Character


class CharacterFactory(factory.django.DjangoModelFactory[Character]):
    """``CharacterFactory.create(...)`` is typed as returning a Character."""

    class Meta:
        model = Character
        django_get_or_create = ("name",)

    name = factory.Sequence(lambda n: f"角色{n}")
    master_name = "阿凛"
