"""django-q2 entry points: thin loops over characters, each calling one service."""

from __future__ import annotations

from nekomem.runtime.schedules import each_character
from persona.services import (
    persona_archive_sweep,
    persona_corrections_resolve,
    persona_promote_tick,
    suppressions_refresh,
)
from persona.services.refine import persona_refine
from reflections.services import reflections_refine


def persona_promote_loop() -> None:
    each_character("persona promotion", lambda cid: persona_promote_tick(character_id=cid))


def persona_corrections_loop() -> None:
    each_character("persona corrections", lambda cid: persona_corrections_resolve(character_id=cid))


def persona_archive_loop() -> None:
    each_character("persona archive sweep", lambda cid: persona_archive_sweep(character_id=cid))


def persona_suppressions_loop() -> None:
    each_character("persona suppressions", lambda cid: suppressions_refresh(character_id=cid))


def persona_refine_loop() -> None:
    each_character("persona refine", lambda cid: persona_refine(character_id=cid))


def scoped_refine_loop() -> None:
    """Each subject's persona section and its reflections, never mixed with the private chat's."""

    def both(character_id: int) -> None:
        persona_refine(character_id=character_id, scoped=True)
        reflections_refine(character_id=character_id, scoped=True)

    each_character("scoped refine", both)
