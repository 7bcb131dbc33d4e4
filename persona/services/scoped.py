"""Group-chat persona sections (reference §1.6, §2.10): ``@subject/<key>``, never the master's sections."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Max, Q

from nekomem.characters.locks import lock_character
from nekomem.characters.services import character_memory_changed
from nekomem.journal.causes import caused_by
from nekomem.journal.redaction import events_redact
from nekomem.journal.services import event_append
from nekomem.subjects import SECTION_PREFIX, Subject
from persona.models import CHANGE_POOL, CORRECTION_POOL, PersonaCorrection, PersonaEntry, PersonaSection
from persona.services.entries import contradicts, correction_key, entry_save, section_ensure
from persona.services.records import evidence_set, promoted_entry_id
from reflections.models import Reflection
from reflections.services import reflection_transition

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


@caused_by("forget")
def persona_subject_forget(*, character_id: int, subject_keys: Collection[str]) -> dict[str, int]:
    """Delete the subjects' sections (display names included), entries and pending corrections."""
    keys = list(subject_keys)
    with transaction.atomic():
        lock_character(character_id)
        entries = list(
            PersonaEntry.with_subjects.filter(character_id=character_id, subject_key__in=keys).values_list(
                "pk", "entry_id", "section"
            )
        )
        forgotten_texts = {
            text
            for text, history in PersonaEntry.with_subjects.filter(
                character_id=character_id, subject_key__in=keys
            ).values_list("text", "version_history")
            for text in [text, *(str(old) for old in history or [] if old)]
        }
        for old_text, new_text in PersonaCorrection.with_subjects.filter(
            character_id=character_id, subject_key__in=keys
        ).values_list("old_text", "new_text"):
            forgotten_texts |= {old_text, new_text}
        # Their earlier versions in the journal keep no text: forgetting wins over history.
        events_redact(
            character_id=character_id,
            texts=forgotten_texts,
            match=Q(payload__entry__id__in=[entry_id for _pk, entry_id, _section in entries]),
        )
        for _pk, entry_id, section in entries:
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
        doomed = PersonaCorrection.with_subjects.filter(character_id=character_id, subject_key__in=keys)
        correction_pks = list(doomed.values_list("pk", flat=True))
        corrections = doomed.delete()[0]
        if removed_entries or sections or corrections:
            character_memory_changed(
                character_id=character_id, pool=CHANGE_POOL, rows=[pk for pk, *_ in entries]
            )
        if correction_pks:  # their versions keep no text either (cause forget)
            character_memory_changed(character_id=character_id, pool=CORRECTION_POOL, rows=correction_pks)
    return {"persona_entries": removed_entries, "persona_sections": sections, "corrections": corrections}


# Confirmed for this long, a subject's reflection goes into its persona section (§3.5.4): the same
# seven days as the master's time-driven path.
SUBJECT_AUTO_PROMOTE = timedelta(days=7)
TIME_DRIVEN_SOURCE = "reflection_time_driven"


def _subject_correction_queue(*, reflection: Reflection, old_text: str, section: str, now: datetime) -> None:
    """A contradiction inside the subject's own section: one queued pair, kept with the subject (so
    forgetting the subject removes it), never in the master's queue."""
    extra: dict[str, Any] = {**(reflection.extra or {}), "section": section}
    key = correction_key(old_text, reflection.text, reflection.entity, {**extra, "scope": section})
    correction, created = PersonaCorrection.with_subjects.get_or_create(
        character_id=reflection.character_id,
        dedup_key=key,
        defaults={
            "old_text": old_text,
            "new_text": reflection.text,
            "entity": reflection.entity,
            "created_at": now,
            "extra": extra,
            "subject_key": reflection.subject_key,
        },
    )
    if created:
        character_memory_changed(
            character_id=reflection.character_id, pool=CORRECTION_POOL, rows=[correction.pk]
        )
        event_append(
            character_id=reflection.character_id,
            event_type="correction.queued",
            payload={
                "old_text": correction.old_text,
                "new_text": correction.new_text,
                "entity": correction.entity,
                "created_at": now.isoformat(),
                "extra": extra,
            },
        )


def _subject_add(*, reflection: Reflection, stop_names: list[str], now: datetime) -> str:
    """``persona.aadd_fact`` into ``@subject/<key>``: the contradiction test runs against that section
    only (a subject has no card entries, so nothing is denied by a card); added → ``promoted``."""
    section = SECTION_PREFIX + reflection.subject_key
    entries = PersonaEntry.with_subjects.filter(
        character_id=reflection.character_id, section=section, archive_shard_path__isnull=True
    ).order_by("position", "pk")
    for existing in entries:
        if contradicts(existing.text, reflection.text, stop_names=stop_names):
            _subject_correction_queue(reflection=reflection, old_text=existing.text, section=section, now=now)
            return "queued_correction"
    section_ensure(character_id=reflection.character_id, key=section, extra=reflection.extra or {})
    last = entries.aggregate(m=Max("position"))["m"]
    entry = PersonaEntry(
        character_id=reflection.character_id,
        entry_id=promoted_entry_id(reflection.reflection_id),
        section=section,
        position=0 if last is None else last + 1,
        text=reflection.text.strip(),
        source=TIME_DRIVEN_SOURCE,
        source_id=reflection.reflection_id,
        created_at=now,
        extra=dict(reflection.extra or {}),
        subject_key=reflection.subject_key,
    )
    evidence_set(entry, reflection.evidence())
    entry_save(entry, event_type="persona.fact_added")
    reflection_transition(reflection=reflection, to=Reflection.Status.PROMOTED, now=now)
    return "promoted"


def persona_subject_reflections_promote(*, character_id: int, now: datetime) -> dict[str, str]:
    """The one lifecycle of group-chat subjects' reflections (§3.5.1, §3.5.4), whatever the
    powerful-memory switch says: confirmed for 7 days → added to the subject's own persona section with
    source ``reflection_time_driven``, no LLM. Never the master's sections."""
    outcomes: dict[str, str] = {}
    with transaction.atomic():
        character = lock_character(character_id)
        due = (
            Reflection.with_subjects.filter(
                character_id=character_id,
                status=Reflection.Status.CONFIRMED,
                confirmed_at__lte=now - SUBJECT_AUTO_PROMOTE,
            )
            .exclude(subject_key="")
            .order_by("pk")
        )
        for reflection in due:
            outcomes[reflection.reflection_id] = _subject_add(
                reflection=reflection, stop_names=character.stop_names, now=now
            )
    return outcomes
