"""Group-chat persona sections (reference §1.6, §2.10): ``@subject/<key>``, never the master's sections."""

from __future__ import annotations

from collections.abc import Collection

from django.db import transaction

from nekomem.characters.locks import lock_character
from nekomem.characters.services import character_memory_changed
from nekomem.journal.services import event_append
from nekomem.subjects import Subject
from persona.models import PersonaCorrection, PersonaEntry, PersonaSection
from persona.services.entries import section_ensure

DISPLAY_NAME_MAX = 64


def persona_subject_display_name_set(*, character_id: int, subject: Subject, display_name: str) -> None:
    """Create or rename the subject's section; the name is what ``scoped_context`` shows as its header."""
    with transaction.atomic():
        lock_character(character_id)
        section = section_ensure(character_id=character_id, key=subject.section, extra=subject.as_dict())
        extra = {**subject.as_dict(), **(section.extra or {}), "display_name": display_name}
        if extra != section.extra:
            section.extra = extra
            section.save(update_fields=["extra"])


def persona_subject_forget(*, character_id: int, subject_keys: Collection[str]) -> dict[str, int]:
    """Delete the subjects' sections (display names included), entries and pending corrections."""
    keys = list(subject_keys)
    with transaction.atomic():
        lock_character(character_id)
        entries = list(
            PersonaEntry.with_subjects.filter(character_id=character_id, subject_key__in=keys).values_list(
                "entry_id", "section"
            )
        )
        for entry_id, section in entries:
            # Only the id: the journal must not keep the text of what was forgotten.
            event_append(
                character_id=character_id,
                event_type="persona.entry_updated",
                payload={
                    "section": section,
                    "entry": {"id": entry_id},
                    "removed": True,
                    "reason": "scoped_forget",
                },
            )
        removed_entries = PersonaEntry.with_subjects.filter(
            character_id=character_id, subject_key__in=keys
        ).delete()[0]
        sections = PersonaSection.with_subjects.filter(
            character_id=character_id, subject_key__in=keys
        ).delete()[0]
        corrections = PersonaCorrection.with_subjects.filter(
            character_id=character_id, subject_key__in=keys
        ).delete()[0]
        if removed_entries or sections or corrections:
            character_memory_changed(character_id=character_id)
    return {"persona_entries": removed_entries, "persona_sections": sections, "corrections": corrections}
