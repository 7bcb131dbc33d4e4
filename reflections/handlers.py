"""Registrations with the kernel: event replay handlers, post-turn steps, schedules."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

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
from reflections.models import Reflection, SurfacedReflection
from reflections.observations import ObservationSource, register_observation_source
from reflections.selectors import reflection_event_seeds, reflection_ids_live
from reflections.services import reflections_feedback_check, reflections_keyword_hook
from reflections.services.archive import shard_take
from reflections.services.history import REFLECTIONS_HISTORY
from reflections.services.recheck import register_recheck_jobs
from reflections.services.records import STATUS_STAMPS, evidence_from_snapshot, reflection_from_file_dict
from reflections.services.refine import register_refine_jobs
from reflections.services.retries import register_jobs
from reflections.services.signals import reflection_observation_signal, reflection_observations

_STATE_FIELDS = (
    "archive_shard_path",
    "denied_reason",
    "auto_confirmed",
    "sub_zero_days",
    "archived_at",
    # A text edited by hand (reflections.services.editing), with the ontology it may clear.
    "text",
    "relation_type",
    "temporal_scope",
    "subject",
    # The schema re-check (reflections.services.recheck): the event time judged again, version 2.
    "event_when_raw",
    "event_start_at",
    "event_end_at",
    "schema_version",
    # Refine (reflections.services.refine): the cluster the reflection was last asked about, and when.
    "last_refine_cluster_hash",
    "last_refine_at",
)
_TIME_FIELDS = ("archived_at", "event_start_at", "event_end_at", "last_refine_at")


def replay_reflection_synthesized(character_id: int, payload: dict[str, Any]) -> None:
    """Idempotent: insert the snapshot when missing; an existing row keeps its own later state."""
    if Reflection.with_subjects.filter(character_id=character_id, reflection_id=payload.get("id")).exists():
        return
    reflection_from_file_dict(payload, character_id=character_id).save(force_insert=True)


def replay_reflection_state_changed(character_id: int, payload: dict[str, Any]) -> None:
    reflection = Reflection.with_subjects.filter(
        character_id=character_id, reflection_id=payload.get("reflection_id")
    ).first()
    if reflection is None:
        return
    when = parse_iso(payload.get("ts")) or timezone.now()
    target = payload.get("to")
    if target in Reflection.Status.values:
        reflection.status = target
        stamp = STATUS_STAMPS.get(Reflection.Status(target))
        if stamp and target != payload.get("from"):
            setattr(reflection, stamp, when)
    for name in _STATE_FIELDS:
        if name in payload:
            value = payload[name]
            setattr(reflection, name, parse_iso(value) if name in _TIME_FIELDS else value)
    if isinstance(payload.get("extra"), dict):  # keys set inside ``extra`` (a merge's merged_from_ids)
        reflection.extra = {**(reflection.extra or {}), **payload["extra"]}
    shard = payload.get("archive_shard_path")
    if (
        shard
        and not Reflection.with_subjects.filter(
            character_id=character_id, reflection_id=reflection.reflection_id, archive_shard_path=shard
        ).exists()
    ):
        shard_take(character_id=character_id, name=shard, now=when)
    reflection.save()


def replay_reflection_evidence_updated(character_id: int, payload: dict[str, Any]) -> None:
    reflection = Reflection.with_subjects.filter(
        character_id=character_id, reflection_id=payload.get("reflection_id")
    ).first()
    if reflection is not None:
        evidence_from_snapshot(reflection, payload)
        reflection.save()


def replay_reflection_surfaced(character_id: int, payload: dict[str, Any]) -> None:
    surfaced_at = parse_iso(payload.get("surfaced_at")) or timezone.now()
    Reflection.with_subjects.filter(
        character_id=character_id, reflection_id__in=payload.get("reflection_ids") or []
    ).update(next_eligible_at=parse_iso(payload.get("next_eligible_at")), feedback=None)
    for entry in payload.get("entries") or []:
        SurfacedReflection.objects.get_or_create(
            character_id=character_id,
            reflection_id=entry.get("reflection_id"),
            surfaced_at=surfaced_at,
            defaults={"text": entry.get("text") or ""},
        )


def replay_reflection_rebutted(character_id: int, payload: dict[str, Any]) -> None:
    """The status change travels in its own ``reflection.state_changed`` event; nothing else to do."""


def post_turn_feedback(character_id: int, payload: dict[str, Any]) -> None:
    reflections_feedback_check(character_id=character_id, payload=payload)


def post_turn_keyword_hook(character_id: int, payload: dict[str, Any]) -> None:
    reflections_keyword_hook(character_id=character_id, payload=payload)


def register() -> None:
    """Called once from ``ReflectionsConfig.ready()``, like every layer's registrations."""
    register_history_layer(REFLECTIONS_HISTORY)
    register_event_seeder("reflections", reflection_event_seeds)
    register_live_rows("reflection", reflection_ids_live)
    register_event_handler("reflection.synthesized", replay_reflection_synthesized)
    register_event_handler("reflection.state_changed", replay_reflection_state_changed)
    register_event_handler("reflection.evidence_updated", replay_reflection_evidence_updated)
    register_event_handler("reflection.surfaced", replay_reflection_surfaced)
    register_event_handler("reflection.rebutted", replay_reflection_rebutted)
    register_outbox_step(POST_TURN_OP, "reflections.feedback", post_turn_feedback)
    register_outbox_step(POST_TURN_OP, "reflections.keyword_hook", post_turn_keyword_hook)
    register_jobs()
    register_refine_jobs()
    register_recheck_jobs()
    register_observation_source(
        ObservationSource(
            prefix="reflection", read=reflection_observations, apply=reflection_observation_signal
        )
    )

    for name, func, minutes, what in (
        (
            "reflections-synthesis",
            "reflection_synthesis_loop",
            3,
            "synthesise reflections from unabsorbed facts",
        ),
        (
            "reflections-auto-promote",
            "reflection_auto_promote_loop",
            3,
            "pending → confirmed by score (ON) or age (OFF)",
        ),
        (
            "reflections-stage2",
            "reflection_stage2_loop",
            1,
            "Stage 2: new user facts → evidence signals (ON)",
        ),
        (
            "reflections-rebuttal",
            "reflection_rebuttal_loop",
            3,
            "check confirmed reflections against new messages (ON)",
        ),
        ("reflections-archive", "reflection_archive_loop", 60, "sub-zero days and archive shards"),
        (
            "reflections-refine",
            "reflection_refine_loop",
            30,
            "refine near-identical reflections (ON)",
        ),
        (
            "schema-recheck",
            "schema_recheck_loop",
            1,
            "re-judge v1 reflections, then facts",
        ),
    ):
        register_schedule(
            ScheduleSpec(name=name, func=f"reflections.tasks.{func}", minutes=minutes, description=what)
        )
