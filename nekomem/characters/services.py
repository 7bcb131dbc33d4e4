from __future__ import annotations

from collections.abc import Iterable

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from nekomem.characters.models import Character, MemoryChange
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


# name -> id for the chat write path, per process. A cached id can be stale (the character was
# deleted, or a rolled-back id was reused), so only a write that matches the name as well uses it,
# and a write that finds no row calls character_id_forget.
_ID_CACHE_LIMIT = 10_000
_ids_by_name: dict[str, int] = {}


def character_id_for(*, name: str, cached: bool = False) -> int:
    """The character's id, creating the character on first contact.

    ``cached``: answer from the process's cache when it can. Only for a caller whose write also
    checks the name, since the cached id may belong to a deleted character.
    """
    if cached and (hit := _ids_by_name.get(name)) is not None:
        return hit
    character_id = Character.objects.filter(name=name).values_list("pk", flat=True).first()
    if character_id is None:
        character_id = character_get_or_create(name=name).pk
    if len(_ids_by_name) >= _ID_CACHE_LIMIT:
        _ids_by_name.clear()
    _ids_by_name[name] = character_id
    return character_id


def character_id_forget(*, name: str | None = None) -> None:
    """Drop a cached id (or all of them): the character was deleted or its database replaced."""
    if name is None:
        _ids_by_name.clear()
    else:
        _ids_by_name.pop(name, None)


def character_touch(*, character_id: int, language: str | None = None) -> None:
    """Refresh the activity clock (and remember the chat's locale) with one UPDATE."""
    fields: dict[str, object] = {"last_activity_at": timezone.now()}
    if language:
        fields["language"] = language[:16]
    Character.objects.filter(pk=character_id).update(**fields)


def character_memory_changed(
    *, character_id: int, pool: str = "", rows: Iterable[int] | None = None, vector_only: bool = False
) -> None:
    """Bump the recall-cache version and log what changed, inside the caller's write transaction.

    Every process compares the version with the one its cached index reflects and applies the logged
    rows since (``pool`` and ``rows``: the primary keys of the rows written or deleted). Without a pool
    the change is unknown in detail and readers rebuild. The version is read back under the row lock
    the UPDATE takes, so versions are in commit order per character on every database.
    """
    with transaction.atomic():
        Character.objects.filter(pk=character_id).update(memory_version=F("memory_version") + 1)
        version = Character.objects.filter(pk=character_id).values_list("memory_version", flat=True).first()
        if version is None:
            return
        keys: list[int | None] = [*sorted(set(rows))] if pool and rows is not None else []
        MemoryChange.objects.bulk_create(
            MemoryChange(
                character_id=character_id, version=version, pool=pool, row=key, vector_only=vector_only
            )
            for key in keys or [None]
        )
