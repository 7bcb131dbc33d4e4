"""The per-process caches, so ``/reload`` can drop all of them in every worker.

Each module that keeps values from the database or the configuration in process memory registers
how to forget them (in its app's ``ready``); the kernel never has to know the layers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class CacheUsage:
    """What one cache holds in this process: how its memory grows with the data it keeps."""

    entries: int
    rows: int
    bytes: int


_forgetters: dict[str, Callable[[], None]] = {}
_usages: dict[str, Callable[[], CacheUsage]] = {}


def process_cache_register(
    name: str, forget: Callable[[], None], *, usage: Callable[[], CacheUsage] | None = None
) -> None:
    """``usage``: for a cache that can grow large, what it holds now (the status report shows it)."""
    _forgetters[name] = forget
    if usage is not None:
        _usages[name] = usage


def process_caches_usage() -> dict[str, CacheUsage]:
    return {name: usage() for name, usage in sorted(_usages.items())}


def process_caches_forget() -> list[str]:
    """Drop every registered cache; the next use reads the database and the settings again."""
    for forget in _forgetters.values():
        forget()
    return sorted(_forgetters)
