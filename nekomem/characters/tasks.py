"""django-q2 entry points of the characters kernel: thin adapters over its services."""

from __future__ import annotations

from nekomem.characters.services import memory_changes_prune


def memory_changes_prune_task() -> int:
    return memory_changes_prune()
