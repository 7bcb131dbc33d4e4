"""django-q2 entry points: thin loops over characters, each calling one service."""

from __future__ import annotations

import logging

from facts.selectors import characters_with_pending_pairs
from facts.services import dedup_pairs_arbitrate, facts_archive_sweep, facts_extraction_tick
from nekomem.characters.models import Character
from nekomem.runtime.state import StorageBlocked

logger = logging.getLogger(__name__)


def _each_character(job: str, ids: list[int], run: object) -> None:
    for character_id in ids:
        try:
            run(character_id)  # type: ignore[operator]
        except StorageBlocked:
            raise  # the whole tick waits for ``continue``, not only this character
        except Exception:
            # One character's failure must not starve the others of their tick.
            logger.exception("%s failed for character %s", job, character_id)


def facts_extraction_loop() -> None:
    ids = list(Character.objects.order_by("pk").values_list("pk", flat=True))
    _each_character("fact extraction", ids, lambda cid: facts_extraction_tick(character_id=cid))


def facts_archive_loop() -> None:
    ids = list(Character.objects.order_by("pk").values_list("pk", flat=True))
    _each_character("fact archive", ids, lambda cid: facts_archive_sweep(character_id=cid))


def facts_dedup_loop() -> None:
    _each_character(
        "fact dedup", characters_with_pending_pairs(), lambda cid: dedup_pairs_arbitrate(character_id=cid)
    )
