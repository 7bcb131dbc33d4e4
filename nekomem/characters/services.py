from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from nekomem.characters.models import Character
from nekomem.characters.names import validate_character_name


def character_get_or_create(*, name: str) -> Character:
    """Return the character, creating it on first contact (a first ``/cache`` for a valid name)."""
    validate_character_name(name)
    existing = Character.objects.filter(name=name).first()
    if existing is not None:
        return existing
    try:
        with transaction.atomic():
            return Character.objects.create(name=name)
    except IntegrityError:
        # Another request created it between our read and our insert.
        return Character.objects.get(name=name)


def character_touch(*, character_id: int, language: str | None = None) -> None:
    """Refresh the activity clock (and remember the chat's locale) with one UPDATE."""
    fields: dict[str, object] = {"last_activity_at": timezone.now()}
    if language:
        fields["language"] = language[:16]
    Character.objects.filter(pk=character_id).update(**fields)


def character_memory_changed(*, character_id: int) -> None:
    """Bump the recall-cache version in the database, inside the caller's write transaction.

    Every process compares it with the version its cached index was built from, so a change
    made through any worker invalidates every worker's cache.
    """
    Character.objects.filter(pk=character_id).update(memory_version=F("memory_version") + 1)
