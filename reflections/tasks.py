"""django-q2 entry points: thin loops over characters, each calling one service."""

from __future__ import annotations

from nekomem.runtime.schedules import each_character
from reflections.services import (
    reflection_synthesize,
    reflections_archive_sweep,
    reflections_auto_promote,
    reflections_rebuttal_tick,
    reflections_stage2,
    reflections_subjects_synthesize,
)
from reflections.services.recheck import schema_recheck_tick
from reflections.services.refine import reflections_refine


def _synthesize_all(character_id: int) -> None:
    reflection_synthesize(character_id=character_id)
    reflections_subjects_synthesize(character_id=character_id)


def reflection_synthesis_loop() -> None:
    each_character("reflection synthesis", _synthesize_all)


def reflection_auto_promote_loop() -> None:
    each_character("reflection auto-promote", lambda cid: reflections_auto_promote(character_id=cid))


def reflection_stage2_loop() -> None:
    each_character("stage 2", lambda cid: reflections_stage2(character_id=cid))


def reflection_rebuttal_loop() -> None:
    each_character("rebuttal", lambda cid: reflections_rebuttal_tick(character_id=cid))


def reflection_archive_loop() -> None:
    each_character("reflection archive sweep", lambda cid: reflections_archive_sweep(character_id=cid))


def reflection_refine_loop() -> None:
    each_character("reflection refine", lambda cid: reflections_refine(character_id=cid))


# The original ticks every 30 s; schedules here run each minute, so a tick re-judges two entries.
RECHECKS_PER_TICK = 2


def schema_recheck_loop() -> None:
    for _ in range(RECHECKS_PER_TICK):
        if schema_recheck_tick().outcome in ("nothing", "waiting"):
            break
