"""The facts archive (reference §2.5): absorbed facts older than 7 days, swept at most once a day, and
one fact archived or restored by hand from the memory browser.

Archiving flips a flag on the same row, so no reader can ever see a fact twice or not at all.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from facts.models import RECALL_POOL, ExtractionCursor, Fact
from facts.services.cursors import extraction_cursor_ensure
from nekomem.characters.locks import lock_character, lock_rows
from nekomem.characters.services import character_memory_changed
from nekomem.journal.causes import caused_by
from nekomem.journal.services import event_append
from nekomem.journal.versions import versions_record

ARCHIVE_AGE = timedelta(days=7)
ARCHIVE_THROTTLE = timedelta(hours=24)


@caused_by("archive")
def facts_archive_sweep(*, character_id: int, now: datetime | None = None, force: bool = False) -> int:
    """Archive the character's eligible facts; returns how many moved (0 when throttled)."""
    now = now or timezone.now()
    with transaction.atomic():
        lock_character(character_id)
        cursor = extraction_cursor_ensure(character_id=character_id)
        last = cursor.last_archive_attempt_at
        if not force and last is not None and now - last < ARCHIVE_THROTTLE:
            return 0
        ExtractionCursor.objects.filter(pk=cursor.pk).update(last_archive_attempt_at=now)
        eligible = Fact.objects.filter(
            character_id=character_id, archived=False, absorbed=True, created_at__lt=now - ARCHIVE_AGE
        )
        moving = list(eligible.order_by("created_at", "pk").values_list("pk", "fact_id"))
        if not moving:
            return 0
        fact_ids = [fact_id for _, fact_id in moving]
        Fact.objects.filter(character_id=character_id, fact_id__in=fact_ids).update(
            archived=True, archived_at=now, updated_at=now
        )
        event_append(
            character_id=character_id,
            event_type="fact.archived",
            payload={"fact_ids": fact_ids, "archived_at": now.isoformat()},
        )
        character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=[pk for pk, _ in moving])
    return len(fact_ids)


def facts_mark_absorbed(*, character_id: int, fact_ids: list[str]) -> int:
    """One-way ``absorbed`` flag, for the reflection synthesis; call inside its transaction."""
    # By id: a group-chat subject's facts are absorbed into that subject's reflection the same way.
    absorbing = Fact.with_subjects.filter(Q(absorbed=False), character_id=character_id, fact_id__in=fact_ids)
    pks = list(absorbing.values_list("pk", flat=True))
    changed = Fact.with_subjects.filter(pk__in=pks).update(absorbed=True, updated_at=timezone.now())
    event_append(character_id=character_id, event_type="fact.absorbed", payload={"fact_ids": list(fact_ids)})
    if changed:
        # ``absorbed`` is not visible to recall: the bump logs no row. The history still versions them
        # (an undo of the synthesis frees them again).
        character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=[])
        versions_record(character_id, RECALL_POOL, pks)
    return changed


def fact_archive(
    *, character_id: int, fact_id: str, now: datetime | None = None, with_subjects: bool = False
) -> Fact:
    """Archive one fact by hand, whatever its age; an archived one stays as it is.

    Raises Fact.DoesNotExist when it is not the character's. The event is the sweep's, so a replay
    archives it the same way.
    """
    now = now or timezone.now()
    manager = Fact.with_subjects if with_subjects else Fact.objects  # a subject's fact: the browser
    with transaction.atomic():
        lock_character(character_id)
        fact = lock_rows(manager.filter(character_id=character_id, fact_id=fact_id)).get()
        if fact.archived:
            return fact
        fact.archived, fact.archived_at = True, now
        fact.save(update_fields=["archived", "archived_at", "updated_at"])
        event_append(
            character_id=character_id,
            event_type="fact.archived",
            payload={"fact_ids": [fact_id], "archived_at": now.isoformat()},
        )
        character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=[fact.pk])
    return fact


def fact_restore(*, character_id: int, fact_id: str, with_subjects: bool = False) -> Fact:
    """Bring one archived fact back to the active facts; raises Fact.DoesNotExist when it is not the
    character's.

    The original's event log has no type for leaving the archive (its archive is one-way), so the
    restore appends none: the ``fact.archived`` event before it lies behind the applied sentinel and
    is never replayed over it. An absorbed fact older than 7 days goes back to the archive at the next
    daily sweep, whose rule knows nothing of restores.
    """
    manager = Fact.with_subjects if with_subjects else Fact.objects  # a subject's fact: the browser
    with transaction.atomic():
        lock_character(character_id)
        fact = lock_rows(manager.filter(character_id=character_id, fact_id=fact_id)).get()
        if not fact.archived:
            return fact
        fact.archived, fact.archived_at = False, None
        fact.save(update_fields=["archived", "archived_at", "updated_at"])
        character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=[fact.pk])
    return fact
