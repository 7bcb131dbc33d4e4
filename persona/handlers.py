"""Registrations with the kernel: event replay handlers, the post-turn mention step, schedules."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from install.sync import register_card_hook
from nekomem.journal.registry import (
    POST_TURN_OP,
    register_event_handler,
    register_event_seeder,
    register_history_layer,
    register_live_rows,
    register_outbox_step,
)
from nekomem.runtime.schedules import ScheduleSpec, register_schedule
from nekomem.timestamps import parse_iso
from persona.models import PersonaCorrection, PersonaEntry
from persona.selectors import persona_entry_ids_live, persona_event_seeds
from persona.services import persona_ensure, persona_mentions_record, persona_prepared_early
from persona.services.corrections import register_jobs as corrections_jobs_register
from persona.services.entries import correction_key, section_ensure
from persona.services.history import CORRECTIONS_HISTORY, PERSONA_HISTORY
from persona.services.mentions import ai_reply_text
from persona.services.observations import PREFIX, persona_observation_signal, persona_observations
from persona.services.promotion import register_jobs as promotion_jobs_register
from persona.services.records import entry_from_file_dict
from persona.services.refine import register_refine_jobs
from reflections.services import ObservationSource, register_observation_source


def replay_entry_snapshot(character_id: int, payload: dict[str, Any]) -> None:
    """Idempotent: the event carries the whole entry, so replay writes it as it was (or removes it)."""
    raw = payload.get("entry") or {}
    existing = PersonaEntry.with_subjects.filter(character_id=character_id, entry_id=raw.get("id")).first()
    if payload.get("removed"):
        if existing is not None:
            existing.delete()
        return
    section = str(payload.get("section") or "master")
    section_ensure(character_id=character_id, key=section)
    incoming = entry_from_file_dict(
        raw, character_id=character_id, section=section, position=int(payload.get("position") or 0)
    )
    if existing is not None:
        incoming.pk, incoming.created_at = existing.pk, incoming.created_at or existing.created_at
    incoming.save()


def replay_entry_evidence(character_id: int, payload: dict[str, Any]) -> None:
    entry = PersonaEntry.with_subjects.filter(
        character_id=character_id, entry_id=payload.get("entry_id")
    ).first()
    if entry is None:
        return
    entry.reinforcement = float(payload.get("reinforcement", entry.reinforcement))
    entry.disputation = float(payload.get("disputation", entry.disputation))
    entry.rein_last_signal_at = parse_iso(payload.get("rein_last_signal_at")) or entry.rein_last_signal_at
    entry.disp_last_signal_at = parse_iso(payload.get("disp_last_signal_at")) or entry.disp_last_signal_at
    entry.sub_zero_days = int(payload.get("sub_zero_days", entry.sub_zero_days))
    entry.save()


def replay_correction_queued(character_id: int, payload: dict[str, Any]) -> None:
    old, new, entity = (
        payload.get("old_text") or "",
        payload.get("new_text") or "",
        payload.get("entity") or "",
    )
    PersonaCorrection.with_subjects.get_or_create(
        character_id=character_id,
        dedup_key=correction_key(old, new, entity, payload.get("extra") or {}),
        defaults={
            "old_text": old,
            "new_text": new,
            "entity": entity,
            "created_at": parse_iso(payload.get("created_at")) or timezone.now(),
            "extra": payload.get("extra") or {},
        },
    )


def replay_correction_resolved(character_id: int, payload: dict[str, Any]) -> None:
    key = correction_key(
        payload.get("old_text") or "",
        payload.get("new_text") or "",
        payload.get("entity") or "",
        payload.get("extra") or {},
    )
    PersonaCorrection.with_subjects.filter(character_id=character_id, dedup_key=key).delete()


def replay_mention(character_id: int, payload: dict[str, Any]) -> None:
    """Mentions are short-lived bookkeeping: the entry snapshot events carry what must survive."""


def post_turn_mentions(character_id: int, payload: dict[str, Any]) -> None:
    persona_mentions_record(character_id=character_id, reply=ai_reply_text(payload))


def post_turn_prepare(character_id: int, payload: dict[str, Any]) -> None:
    persona_prepared_early(character_id=character_id)


def card_changed(character_id: int) -> None:
    persona_ensure(character_id=character_id)


def register() -> None:
    """Called once from ``PersonaConfig.ready()``, like every layer's registrations."""
    register_history_layer(PERSONA_HISTORY)
    register_history_layer(CORRECTIONS_HISTORY)
    register_event_seeder("persona", persona_event_seeds)
    register_live_rows("persona", persona_entry_ids_live)
    register_event_handler("persona.fact_added", replay_entry_snapshot)
    register_event_handler("persona.entry_updated", replay_entry_snapshot)
    register_event_handler("persona.evidence_updated", replay_entry_evidence)
    register_event_handler("persona.fact_mentioned", replay_mention)
    register_event_handler("persona.suppressed", replay_mention)
    register_event_handler("correction.queued", replay_correction_queued)
    register_event_handler("correction.resolved", replay_correction_resolved)
    register_outbox_step(POST_TURN_OP, "persona.mentions", post_turn_mentions)
    register_outbox_step(POST_TURN_OP, "persona.prepare", post_turn_prepare)
    promotion_jobs_register()
    corrections_jobs_register()
    register_refine_jobs()
    # Install mode: an edited card in characters.json is mirrored at once, not at the next read.
    register_card_hook("persona.card", card_changed)
    register_observation_source(
        ObservationSource(prefix=PREFIX, read=persona_observations, apply=persona_observation_signal)
    )

    for name, func, minutes, what in (
        (
            "persona-promote",
            "persona_promote_loop",
            3,
            "confirmed reflections → persona (merge LLM ON, 7+7 days OFF)",
        ),
        ("persona-corrections", "persona_corrections_loop", 1, "resolve queued persona corrections (ON)"),
        ("persona-archive", "persona_archive_loop", 60, "sub-zero days and persona archive shards"),
        ("persona-suppressions", "persona_suppressions_loop", 10, "lift mention suppressions after 5 h"),
        (
            "persona-refine",
            "persona_refine_loop",
            30,
            "refine near-identical entries (ON)",
        ),
        (
            "scoped-refine",
            "scoped_refine_loop",
            30,
            "refine each group-chat subject's persona section and reflections (ON)",
        ),
    ):
        register_schedule(
            ScheduleSpec(name=name, func=f"persona.tasks.{func}", minutes=minutes, description=what)
        )
