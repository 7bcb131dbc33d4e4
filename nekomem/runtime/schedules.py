"""Maintenance schedules, declared in code and upserted into django-q2 by ``setup_schedules``.

Apps add theirs from AppConfig.ready() (their ``handlers.register()``); intervals are tuning, not API
(django-q2 schedules run at minute granularity, so the original's 40 s loops run every minute here).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from nekomem.characters.models import Character
from nekomem.runtime.state import StorageBlocked

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ScheduleSpec:
    name: str
    func: str
    minutes: int
    description: str = ""


_specs: dict[str, ScheduleSpec] = {}


def register_schedule(spec: ScheduleSpec) -> None:
    _specs[spec.name] = spec


def registered_schedules() -> list[ScheduleSpec]:
    return sorted(_specs.values(), key=lambda s: s.name)


def each_character(job: str, run: Callable[[int], object]) -> None:
    """A schedule's tick over every character, in id order.

    One character's failure is logged and must not starve the others of their tick.
    """
    for character_id in Character.objects.order_by("pk").values_list("pk", flat=True):
        try:
            run(character_id)
        except StorageBlocked:
            raise  # the whole tick waits for ``continue``, not only this character
        except Exception:
            logger.exception("%s failed for character %s", job, character_id)
