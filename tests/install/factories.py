from __future__ import annotations

import factory
from django.utils import timezone

from install.models import FolderCharacter, FolderFile, FolderState


class FolderFileFactory(factory.django.DjangoModelFactory[FolderFile]):
    """A file of ``memory/<name>/`` as the folder sync recorded it (one refused, for the admin)."""

    class Meta:
        model = FolderFile

    name = factory.Sequence(lambda n: f"角色{n}")
    filename = "facts.json"
    size = 120
    mtime_ns = factory.LazyFunction(lambda: int(timezone.now().timestamp() * 1e9))
    sha256 = factory.Sequence(lambda n: f"{n:064x}")
    refused = "facts.json is not a JSON list"
    refused_at = factory.LazyFunction(timezone.now)


class FolderCharacterFactory(factory.django.DjangoModelFactory[FolderCharacter]):
    class Meta:
        model = FolderCharacter

    name = factory.Sequence(lambda n: f"角色{n}")
    stamp = factory.Sequence(lambda n: f"stamp-{n}")


class FolderStateFactory(factory.django.DjangoModelFactory[FolderState]):
    class Meta:
        model = FolderState
        django_get_or_create = ("pk",)

    pk = 1
    root = "/home/user/N.E.K.O"
    migration = "done"
    migration_total = 3
    migration_done = 3
    migration_finished_at = factory.LazyFunction(timezone.now)
