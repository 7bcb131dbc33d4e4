"""The per-process caches, so ``/reload`` can drop all of them in every worker.

Each module that keeps values from the database or the configuration in process memory registers
how to forget them (in its app's ``ready``); the kernel never has to know the layers.
"""

from __future__ import annotations

from collections.abc import Callable

_forgetters: dict[str, Callable[[], None]] = {}


def process_cache_register(name: str, forget: Callable[[], None]) -> None:
    _forgetters[name] = forget


def process_caches_forget() -> list[str]:
    """Drop every registered cache; the next use reads the database and the settings again."""
    for forget in _forgetters.values():
        forget()
    return sorted(_forgetters)
