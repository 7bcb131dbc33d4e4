"""The fifteen event types of the original event log (reference §2.14). Anything else is refused."""

EVENT_TYPES: tuple[str, ...] = (
    "fact.added",
    "fact.absorbed",
    "fact.archived",
    "reflection.synthesized",
    "reflection.state_changed",
    "reflection.surfaced",
    "reflection.rebutted",
    "persona.fact_added",
    "persona.fact_mentioned",
    "persona.suppressed",
    "correction.queued",
    "correction.resolved",
    "reflection.evidence_updated",
    "persona.evidence_updated",
    "persona.entry_updated",
)

EVIDENCE_SOURCES: tuple[str, ...] = (
    "user_fact",
    "user_confirm",
    "user_rebut",
    "user_ignore",
    "user_keyword_rebut",
    "migration_seed",
    "promote_merge",
)


# nekomem's own event, not the original's: one row's full state after a change (its version, read back
# by the history), appended in the transaction of the change. It never leaves in ``events.ndjson`` and is
# neither replayed nor counted by the applied sentinel: the views hold it already.
VERSION_EVENT = "memory.version"
JOURNAL_EVENT_TYPES: tuple[str, ...] = (*EVENT_TYPES, VERSION_EVENT)


class UnknownEventType(ValueError):
    pass


def check_event_type(event_type: str) -> str:
    if event_type not in JOURNAL_EVENT_TYPES:
        raise UnknownEventType(f"unknown event type {event_type!r}")
    return event_type
