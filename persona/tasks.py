"""django-q2 entry points: thin loops over characters, each calling one service."""

from __future__ import annotations

import logging
from collections.abc import Callable

from nekomem.characters.models import Character
from persona.services import (
    persona_archive_sweep,
    persona_corrections_resolve,
    persona_promote_tick,
    suppressions_refresh,
)

logger = logging.getLogger(__name__)


def _each_character(job: str, run: Callable[[int], object]) -> None:
    for character_id in Character.objects.order_by("pk").values_list("pk", flat=True):
        try:
            run(character_id)
        except Exception:
            # One character's failure must not starve the others of their tick.
            logger.exception("%s failed for character %s", job, character_id)


def persona_promote_loop() -> None:
    _each_character("persona promotion", lambda cid: persona_promote_tick(character_id=cid))


def persona_corrections_loop() -> None:
    _each_character("persona corrections", lambda cid: persona_corrections_resolve(character_id=cid))


def persona_archive_loop() -> None:
    _each_character("persona archive sweep", lambda cid: persona_archive_sweep(character_id=cid))


def persona_suppressions_loop() -> None:
    _each_character("persona suppressions", lambda cid: suppressions_refresh(character_id=cid))
