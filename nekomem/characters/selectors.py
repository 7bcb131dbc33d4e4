from __future__ import annotations

from django.db.models import QuerySet

from nekomem.characters.models import Character


def character_get(*, name: str) -> Character | None:
    return Character.objects.filter(name=name).first()


def character_list() -> QuerySet[Character]:
    return Character.objects.order_by("name")
