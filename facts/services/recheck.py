"""The facts' side of the schema re-check (reference §3.5.6): a v1 fact gets its event time judged
again and becomes schema version 2; a failed judgement counts one of its 5 ``recheck_attempts`` (a
given-up fact is tried once more by each 5-hour probe of its dead job, and counts on past 5).

The loop itself (reflections first, then facts; characters in turn) lives in the reflections layer,
which may read facts; it writes facts only through these two functions, each in its own locked
transaction. Facts have no update event in the original's log: the change is logged in the memory
change log, which recall's index and the file views follow, as a hand edit of a fact is.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from facts.models import FACT_SCHEMA_VERSION, RECALL_POOL, Fact
from facts.services.records import clean_event_when, resolve_event_when
from nekomem.characters.locks import lock_character, lock_rows
from nekomem.characters.services import character_memory_changed
from nekomem.journal.causes import caused_by

RECHECK_ATTEMPTS_KEY = "recheck_attempts"


def recheck_attempts(extra: dict[str, Any] | None) -> int:
    value = (extra or {}).get(RECHECK_ATTEMPTS_KEY)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@caused_by("recheck")
def fact_schema_rejudged(*, character_id: int, fact_pk: int, event_when: Any) -> Fact | None:
    """Store the re-judged event time (relative to the fact's ``created_at``) and schema version 2;
    None when the fact is gone or was re-judged meanwhile."""
    with transaction.atomic():
        lock_character(character_id)
        fact = lock_rows(
            Fact.with_subjects.filter(
                character_id=character_id, pk=fact_pk, schema_version__lt=FACT_SCHEMA_VERSION
            )
        ).first()
        if fact is None:
            return None
        raw = clean_event_when(event_when)
        fact.event_when_raw = raw
        fact.event_start_at, fact.event_end_at = resolve_event_when(raw, fact.created_at)
        fact.schema_version = FACT_SCHEMA_VERSION
        fact.save(
            update_fields=["event_when_raw", "event_start_at", "event_end_at", "schema_version", "updated_at"]
        )
        character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=[fact.pk])
    return fact


@caused_by("recheck")
def fact_recheck_failed(*, character_id: int, fact_pk: int) -> int:
    """Count one failed re-check of the fact; returns its attempts so far (0 when it is gone)."""
    with transaction.atomic():
        lock_character(character_id)
        fact = lock_rows(Fact.with_subjects.filter(character_id=character_id, pk=fact_pk)).first()
        if fact is None:
            return 0
        attempts = recheck_attempts(fact.extra) + 1
        fact.extra = {**(fact.extra or {}), RECHECK_ATTEMPTS_KEY: attempts}
        fact.save(update_fields=["extra", "updated_at"])
        character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=[fact.pk])
    return attempts
