"""django-q2 entry points of the knowledge app: ids in, one service call."""

from __future__ import annotations

from knowledge import services


def knowledge_import_run(import_id: int) -> str:
    return services.knowledge_import_run(import_id=import_id)


def knowledge_vectors_fill() -> int:
    return services.knowledge_vectors_fill()


def knowledge_tick() -> dict[str, int]:
    return services.knowledge_tick()
