"""django-q2 entry points: thin loops over characters, each calling one service."""

from __future__ import annotations

import logging
from collections.abc import Callable

from nekomem.characters.models import Character
from reflections.services import (
    reflection_synthesize,
    reflections_archive_sweep,
    reflections_auto_promote,
    reflections_rebuttal_tick,
    reflections_stage2,
)

logger = logging.getLogger(__name__)


def _each_character(job: str, run: Callable[[int], object]) -> None:
    for character_id in Character.objects.order_by("pk").values_list("pk", flat=True):
        try:
            run(character_id)
        except Exception:
            # One character's failure must not starve the others of their tick.
            logger.exception("%s failed for character %s", job, character_id)


def reflection_synthesis_loop() -> None:
    _each_character("reflection synthesis", lambda cid: reflection_synthesize(character_id=cid))


def reflection_auto_promote_loop() -> None:
    _each_character("reflection auto-promote", lambda cid: reflections_auto_promote(character_id=cid))


def reflection_stage2_loop() -> None:
    _each_character("stage 2", lambda cid: reflections_stage2(character_id=cid))


def reflection_rebuttal_loop() -> None:
    _each_character("rebuttal", lambda cid: reflections_rebuttal_tick(character_id=cid))


def reflection_archive_loop() -> None:
    _each_character("reflection archive sweep", lambda cid: reflections_archive_sweep(character_id=cid))
