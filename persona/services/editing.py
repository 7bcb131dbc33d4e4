"""Edits by hand (REST, admin): add, edit with version history, delete. Card entries follow the card."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from nekomem.characters.locks import lock_character
from nekomem.characters.services import (
    Forgotten,
    character_memory_changed,
    character_memory_forgotten,
    memory_forgotten_apply,
)
from nekomem.errors import Conflict
from nekomem.journal.causes import caused_by
from nekomem.journal.redaction import events_redact
from nekomem.journal.services import event_append
from persona.models import CHANGE_POOL, CORRECTION_POOL, PersonaCorrection, PersonaEntry
from persona.services.entries import AddResult, entry_add, entry_text_replace, persona_prepare


def _editable(*, character_id: int, entry_id: str, with_subjects: bool = False) -> PersonaEntry:
    manager = PersonaEntry.with_subjects if with_subjects else PersonaEntry.objects
    entry = manager.filter(character_id=character_id, entry_id=entry_id).first()
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
    *,
    character_id: int,
    entry_id: str,
    text: str,
    now: datetime | None = None,
    with_subjects: bool = False,
) -> PersonaEntry:
    """``with_subjects``: an entry of a group-chat subject's section too (the memory browser)."""
    now = now or timezone.now()
    if not text.strip():
        raise ValueError("text must not be empty")
    with transaction.atomic():
        lock_character(character_id)
        entry = _editable(character_id=character_id, entry_id=entry_id, with_subjects=with_subjects)
        entry_text_replace(entry=entry, text=text, now=now, reason="manual_edit")
    return entry


@caused_by("forget")
def persona_entry_delete(*, character_id: int, entry_id: str, with_subjects: bool = False) -> Forgotten:
    """Delete the entry and the copies of its text: the corrections that quote it and the text in its
    earlier journal events (the removal event replays by id alone); then the copies outside the
    database (``memory_forgotten_apply``). The version bump, logged in the persona pool, makes every
    process's render of the persona read the rows again (recall holds no persona entry).
    ``with_subjects``: an entry of a group-chat subject's section too (the memory browser), and its
    subject's corrections with it."""
    with transaction.atomic():
        lock_character(character_id)
        entry = _editable(character_id=character_id, entry_id=entry_id, with_subjects=with_subjects)
        texts = {entry.text, *(str(old) for old in entry.version_history if old)}
        # The corrections of the entry's own memory (the master's, or its subject's) that quote it.
        quoting = PersonaCorrection.with_subjects.filter(subject_key=entry.subject_key)
        quoted = quoting.filter(Q(old_text__in=texts) | Q(new_text__in=texts), character_id=character_id)
        correction_pks = list(quoted.values_list("pk", flat=True))
        corrections, _ = quoted.delete()
        if correction_pks:  # their versions keep no text either (cause forget)
            character_memory_changed(character_id=character_id, pool=CORRECTION_POOL, rows=correction_pks)
        events = events_redact(
            character_id=character_id, texts=texts, match=Q(payload__entry__id=entry.entry_id)
        )
        event_append(
            character_id=character_id,
            event_type="persona.entry_updated",
            payload={
                "section": entry.section,
                "entry": {"id": entry.entry_id},
                "removed": True,
                "reason": "manual_delete",
            },
        )
        deleted = entry.pk
        entry.delete()
        character_memory_changed(character_id=character_id, pool=CHANGE_POOL, rows=[deleted])
        character_memory_forgotten(character_id=character_id)
    return memory_forgotten_apply(
        character_id=character_id,
        rows={"persona_entries": 1, "corrections": corrections, "journal_texts": events},
    )
