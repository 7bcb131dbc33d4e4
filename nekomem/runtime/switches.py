"""Feature switches (``powerful_memory_enabled``, ``recent_memory_auto_review``): missing means on.

Standalone they are rows of FeatureSwitch; in install mode the install's ``core_config.json`` is the
one truth (the main server's settings page writes it), read on every check and written by our toggles:
the install app registers that store (``register_switch_store``), so the runtime imports no app.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction

from nekomem.runtime.models import FeatureSwitch

POWERFUL_MEMORY = "powerful_memory_enabled"
RECENT_AUTO_REVIEW = "recent_memory_auto_review"
KNOWN_SWITCHES = (POWERFUL_MEMORY, RECENT_AUTO_REVIEW)

# The post-turn op reads a switch on every chat turn. A flip is seen at once by the process that made
# it and within this long by every other process, like the restricted-mode flag.
SWITCH_CACHE_SECONDS = 1.0
_cache: dict[str, tuple[float, bool]] = {}


@dataclass(frozen=True)
class SwitchStore:
    """Where the switches live instead of the rows, while ``active()`` says so (install mode)."""

    active: Callable[[], bool]
    enabled: Callable[[str], bool]  # read on every check, uncached
    write: Callable[[str, bool], None]  # may raise: the row written with it rolls back


_store: SwitchStore | None = None


def register_switch_store(store: SwitchStore) -> None:
    global _store
    _store = store


def _active_store() -> SwitchStore | None:
    return _store if _store is not None and _store.active() else None


def switch_enabled(name: str) -> bool:
    store = _active_store()
    if store is not None:
        return store.enabled(name)
    now = time.monotonic()
    hit = _cache.get(name)
    if hit is not None and now - hit[0] < SWITCH_CACHE_SECONDS:
        return hit[1]
    row = FeatureSwitch.objects.filter(name=name).values_list("enabled", flat=True).first()
    enabled = True if row is None else bool(row)
    _cache[name] = (now, enabled)
    return enabled


def switch_set(*, name: str, enabled: bool) -> None:
    if name not in KNOWN_SWITCHES:
        raise ValueError(f"unknown switch {name!r}")
    with transaction.atomic():
        FeatureSwitch.objects.update_or_create(name=name, defaults={"enabled": enabled})
        store = _active_store()
        if store is not None:
            # Last, so a file that cannot be written (ConfigFileError) rolls the row back.
            store.write(name, enabled)
    _cache.pop(name, None)


def switches_forget() -> None:
    """Drop the cached values (a test's rolled-back database, an import of runtime state)."""
    _cache.clear()
