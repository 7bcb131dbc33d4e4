"""Feature switches (``powerful_memory_enabled``, ``recent_memory_auto_review``): missing means on."""

from __future__ import annotations

from nekomem.runtime.models import FeatureSwitch

POWERFUL_MEMORY = "powerful_memory_enabled"
RECENT_AUTO_REVIEW = "recent_memory_auto_review"
KNOWN_SWITCHES = (POWERFUL_MEMORY, RECENT_AUTO_REVIEW)


def switch_enabled(name: str) -> bool:
    row = FeatureSwitch.objects.filter(name=name).values_list("enabled", flat=True).first()
    return True if row is None else bool(row)


def switch_set(*, name: str, enabled: bool) -> None:
    if name not in KNOWN_SWITCHES:
        raise ValueError(f"unknown switch {name!r}")
    FeatureSwitch.objects.update_or_create(name=name, defaults={"enabled": enabled})
