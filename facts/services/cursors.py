"""The character's ``ExtractionCursor`` row, created on first use by whichever loop gets there first."""

from __future__ import annotations

from django.db import transaction

from facts.models import ExtractionCursor
from nekomem.characters.locks import character_row_ensure


def extraction_cursor_ensure(*, character_id: int) -> ExtractionCursor:
    """The character's extraction cursor; a missing one is created through ``character_row_ensure``.

    The extraction tick (outside the character lock) and the archive sweep (inside it) both meet
    characters with no cursor yet at server start; an insert made without the lock deadlocked with
    the sweep's own insert on PostgreSQL. A present cursor is one plain read, with no lock taken.
    """
    cursor = ExtractionCursor.objects.filter(character_id=character_id).first()
    if cursor is not None:
        return cursor
    with transaction.atomic():
        return character_row_ensure(ExtractionCursor, character_id)
