"""The powerful-memory switch's ON→OFF migration (reference §1.4, §3.5.4, §3.7).

Turning the switch OFF first stamps ``confirmed_at = now`` on every confirmed reflection of every
character, so the age-driven promotion does not promote old entries in bulk. The switch goes OFF only
once that succeeded for every character; one transaction holds every character's lock in id order,
so two toggles (or a toggle and a promotion) run one after the other.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from nekomem.characters.locks import lock_character
from nekomem.characters.models import Character
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_enabled, switch_set
from reflections.models import Reflection

logger = logging.getLogger(__name__)


def _reset_all(now: datetime) -> int:
    count = 0
    for character_id in Character.objects.order_by("pk").values_list("pk", flat=True):
        lock_character(character_id)
        count += Reflection.objects.filter(
            character_id=character_id, status=Reflection.Status.CONFIRMED
        ).update(confirmed_at=now)
    return count


def reflections_reset_confirmed_at(*, now: datetime | None = None) -> int:
    """``/internal/memory/reset_confirmed_at``: returns how many reflections were stamped."""
    now = now or timezone.now()
    with transaction.atomic():
        count = _reset_all(now)
    logger.info("reset confirmed_at count=%d", count)
    return count


def powerful_memory_set(*, enabled: bool, now: datetime | None = None) -> bool:
    """Set the switch; OFF only after the reset succeeded for every character (same transaction)."""
    now = now or timezone.now()
    with transaction.atomic():
        if not enabled and switch_enabled(POWERFUL_MEMORY):
            count = _reset_all(now)
            logger.info("powerful memory off: reset confirmed_at count=%d", count)
        switch_set(name=POWERFUL_MEMORY, enabled=enabled)
    return switch_enabled(POWERFUL_MEMORY)
