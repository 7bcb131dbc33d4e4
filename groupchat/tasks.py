"""Group chat's django-q2 entry points."""

from __future__ import annotations

from groupchat.services import scoped_write_keys_prune


def scoped_write_keys_prune_task() -> int:
    return scoped_write_keys_prune()
