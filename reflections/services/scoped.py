"""Group-chat reflections (reference §1.6, §3.5.1): forgetting a subject removes its reflections."""

from __future__ import annotations

from collections.abc import Collection

from django.db import transaction
from django.db.models import Q

from nekomem.characters.locks import lock_character
from nekomem.characters.services import character_memory_changed
from nekomem.journal.redaction import events_redact
from reflections.models import RECALL_POOL, Reflection


def reflections_subject_forget(*, character_id: int, subject_keys: Collection[str]) -> int:
    """Delete every reflection of these subjects, archived ones included; returns how many."""
    with transaction.atomic():
        lock_character(character_id)
        rows = Reflection.with_subjects.filter(character_id=character_id, subject_key__in=list(subject_keys))
        doomed = list(rows.values_list("pk", flat=True))
        ids = list(rows.values_list("reflection_id", flat=True))
        # Their versions in the journal keep no text: forgetting wins over history.
        events_redact(
            character_id=character_id,
            texts=list(rows.values_list("text", flat=True)),
            match=Q(payload__id__in=ids) | Q(payload__reflection_id__in=ids),
        )
        Reflection.with_subjects.filter(pk__in=doomed).delete()
        if doomed:
            character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=doomed)
    return len(doomed)
