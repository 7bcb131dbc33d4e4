"""Registrations with the kernel: event replay handlers, the post-turn step, schedules, file handlers."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from facts.models import Fact
from facts.selectors import fact_ids_live
from facts.services import facts_extract_turn
from facts.services.arbitration import DEDUP_JOB
from facts.services.extraction import EXTRACTION_JOB
from facts.services.history import FACTS_HISTORY
from facts.services.records import fact_from_file_dict
from facts.services.tokens import register_jobs as dedup_index_jobs_register
from nekomem.journal.jobs import register_job_kind
from nekomem.journal.registry import (
    POST_TURN_OP,
    register_event_handler,
    register_history_layer,
    register_live_rows,
    register_outbox_step,
)
from nekomem.runtime.schedules import ScheduleSpec, register_schedule
from nekomem.timestamps import parse_iso


def replay_fact_added(character_id: int, payload: dict[str, Any]) -> None:
    """Idempotent: insert the snapshot when missing; an existing row keeps its own state."""
    if Fact.with_subjects.filter(character_id=character_id, fact_id=payload.get("id")).exists():
        return
    fact_from_file_dict(payload, character_id=character_id, archived=False).save(force_insert=True)


def replay_fact_absorbed(character_id: int, payload: dict[str, Any]) -> None:
    Fact.with_subjects.filter(character_id=character_id, fact_id__in=payload.get("fact_ids", [])).update(
        absorbed=True
    )


def replay_fact_archived(character_id: int, payload: dict[str, Any]) -> None:
    archived_at = payload.get("archived_at")
    when = parse_iso(archived_at) or timezone.now()
    Fact.with_subjects.filter(
        character_id=character_id, fact_id__in=payload.get("fact_ids", []), archived=False
    ).update(archived=True, archived_at=when)


def post_turn_extract(character_id: int, payload: dict[str, Any]) -> None:
    facts_extract_turn(character_id=character_id, payload=payload)


def register() -> None:
    register_live_rows("fact", fact_ids_live)
    register_history_layer(FACTS_HISTORY)
    register_event_handler("fact.added", replay_fact_added)
    register_event_handler("fact.absorbed", replay_fact_absorbed)
    register_event_handler("fact.archived", replay_fact_archived)
    register_outbox_step(POST_TURN_OP, "facts.extract_turn", post_turn_extract)
    # Both loops run their jobs themselves, on their schedules below; the kernel keeps the attempts.
    register_job_kind(EXTRACTION_JOB, handler=None, tier="summary")
    register_job_kind(DEDUP_JOB, handler=None, tier="summary")
    dedup_index_jobs_register()

    register_schedule(
        ScheduleSpec(
            name="facts-extraction",
            func="facts.tasks.facts_extraction_loop",
            minutes=1,
            description="Stage 1 fact extraction, paths A and B (powerful memory ON)",
        )
    )
    register_schedule(
        ScheduleSpec(
            name="facts-archive",
            func="facts.tasks.facts_archive_loop",
            minutes=60,
            description="move absorbed facts older than 7 days to the archive (24 h throttle)",
        )
    )
    register_schedule(
        ScheduleSpec(
            name="facts-dedup",
            func="facts.tasks.facts_dedup_loop",
            minutes=1,
            description="LLM arbitration of queued near-duplicate fact pairs (idle, powerful memory ON)",
        )
    )
