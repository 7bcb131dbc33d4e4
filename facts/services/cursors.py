"""The character's ``ExtractionCursor`` row, created on first use by whichever loop gets there first."""

from __future__ import annotations

from django.db import transaction

from facts.models import ExtractionCursor
from nekomem.characters.locks import lock_character


def extraction_cursor_ensure(*, character_id: int) -> ExtractionCursor:
    """The character's extraction cursor; a missing one is created under the character lock.

    Every creator takes the character lock first, the order the archive sweep already holds. An
    INSERT made without it checks its foreign key with a KEY SHARE lock on the character row, so it
    waits for a sweep holding that row, while the sweep's own INSERT of the same cursor waits for it:
    PostgreSQL's "deadlock detected", seen at server start when the extraction tick and the archive
    sweep both met characters with no cursor yet. Re-entrant: a caller already holding the lock (the
    sweep) takes it again for free. ``ignore_conflicts`` covers a row inserted by a path that did not
    lock, so the insert never raises.
    """
    cursor = ExtractionCursor.objects.filter(character_id=character_id).first()
    if cursor is not None:
        return cursor
    with transaction.atomic():
        lock_character(character_id)
        ExtractionCursor.objects.bulk_create(
            [ExtractionCursor(character_id=character_id)], ignore_conflicts=True
        )
        return ExtractionCursor.objects.get(character_id=character_id)
