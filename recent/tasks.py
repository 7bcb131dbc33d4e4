"""django-q2 entry points of the recent layer: thin, id-based, safe to run twice."""

from __future__ import annotations

from recent.services import idle_maintenance_run


def idle_maintenance() -> int:
    return idle_maintenance_run()
