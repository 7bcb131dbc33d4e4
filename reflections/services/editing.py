"""A reflection's text edited by hand (REST, memory browser).

The original has no event type for a text edit and writing an unknown type is an error (§2.14), so the
edit travels as a ``reflection.state_changed`` that keeps the status (as an archive move of a promoted
entry does) and carries the new text; replay applies it like any other state field.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from nekomem.characters.services import (
    Forgotten,
    character_memory_changed,
    character_memory_forgotten,
    memory_forgotten_apply,
)
from nekomem.journal.causes import caused_by
from nekomem.journal.redaction import events_redact
from nekomem.language.counting import count_tokens
from reflections.models import RECALL_POOL, Reflection, SurfacedReflection
from reflections.ontology import MAX_ONTOLOGY_TEXT_TOKENS
from reflections.services.lifecycle import reflection_fields_set, reflection_locked

MAX_TEXT_LENGTH = 4000


def reflection_edit(
    *,
    character_id: int,
    reflection_id: str,
    text: str,
    now: datetime | None = None,
    with_subjects: bool = False,
) -> Reflection:
    """Replace the text; status and evidence stay. An unchanged text writes nothing."""
    now = now or timezone.now()
    text = text.strip()
    if not text:
        raise ValueError("text must not be empty")
    if len(text) > MAX_TEXT_LENGTH:
        raise ValueError(f"text must be at most {MAX_TEXT_LENGTH} characters")
    with transaction.atomic():
        reflection = reflection_locked(
            character_id=character_id, reflection_id=reflection_id, with_subjects=with_subjects
        )
        if text == reflection.text:
            return reflection
        changed: dict[str, str | None] = {"text": text}
        # The ontology is only kept for short texts (§2.7): a long edit clears all three fields.
        if count_tokens(text) > MAX_ONTOLOGY_TEXT_TOKENS:
            changed.update({"relation_type": None, "temporal_scope": None, "subject": None})
        reflection_fields_set(reflection=reflection, now=now, reason="manual_edit", fields=changed)
        character_memory_changed(
            character_id=character_id, pool=RECALL_POOL, rows=[reflection.pk], held=[reflection]
        )
    return reflection


@caused_by("forget")
def reflection_delete(*, character_id: int, reflection_id: str, with_subjects: bool = False) -> Forgotten:
    """Delete the reflection and the copies of its text: its surfaced record and the text in its journal
    events (the original has no deletion event: the events stay, blanked); then the copies outside the
    database, this process's recall index first (``memory_forgotten_apply``). Raises
    ``Reflection.DoesNotExist``. ``with_subjects``: a group-chat subject's reflection too."""
    with transaction.atomic():
        reflection = reflection_locked(
            character_id=character_id, reflection_id=reflection_id, with_subjects=with_subjects
        )
        vectors = int(bool(reflection.embedding))
        surfaced, _ = SurfacedReflection.objects.filter(
            character_id=character_id, reflection_id=reflection.reflection_id
        ).delete()
        events = events_redact(
            character_id=character_id,
            texts=[reflection.text],
            match=Q(payload__id=reflection.reflection_id)
            | Q(payload__reflection_id=reflection.reflection_id),
        )
        key = reflection.pk
        reflection.delete()
        character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=[key])
        character_memory_forgotten(character_id=character_id)
    return memory_forgotten_apply(
        character_id=character_id,
        rows={"reflections": 1, "vectors": vectors, "surfaced": surfaced, "journal_texts": events},
    )
