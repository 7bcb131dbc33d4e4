"""Maintenance schedules, declared in code and upserted into django-q2 by ``setup_schedules``.

Apps add theirs from AppConfig.ready() (their ``handlers.register()``); intervals are tuning, not API
(django-q2 schedules run at minute granularity, so the original's 40 s loops run every minute here).
"""

from __future__ import annotations

from dataclasses import dataclass


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
