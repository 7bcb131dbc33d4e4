"""Edits by hand (REST, admin): add, edit with version history, delete. Card entries follow the card."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from nekomem.characters.locks import lock_character
from nekomem.errors import Conflict
from persona.models import PersonaEntry
from persona.services.entries import AddResult, entry_add, entry_event, entry_text_replace, persona_prepare


def _editable(*, character_id: int, entry_id: str) -> PersonaEntry:
    entry = PersonaEntry.objects.filter(character_id=character_id, entry_id=entry_id).first()
    if entry is None:
        raise PersonaEntry.DoesNotExist(entry_id)
    if entry.protected:
        raise Conflict("character-card entries change with the card, not by hand")
    return entry


def persona_entry_create(
    *, character_id: int, entity: str, text: str, now: datetime | None = None
) -> AddResult:
    """A ``manual_`` entry, through the same contradiction test as every add."""
    now = now or timezone.now()
    if not text.strip():
        raise ValueError("text must not be empty")
    with transaction.atomic():
        character = lock_character(character_id)
        persona_prepare(character=character, now=now)
        return entry_add(character=character, entity=entity, text=text, source="manual", now=now)


def persona_entry_edit(
    *, character_id: int, entry_id: str, text: str, now: datetime | None = None
) -> PersonaEntry:
    now = now or timezone.now()
    if not text.strip():
        raise ValueError("text must not be empty")
    with transaction.atomic():
        lock_character(character_id)
        entry = _editable(character_id=character_id, entry_id=entry_id)
        entry_text_replace(entry=entry, text=text, now=now, reason="manual_edit")
    return entry


def persona_entry_delete(*, character_id: int, entry_id: str) -> None:
    with transaction.atomic():
        lock_character(character_id)
        entry = _editable(character_id=character_id, entry_id=entry_id)
        entry_event(entry, "persona.entry_updated", removed=True, reason="manual_delete")
        entry.delete()
