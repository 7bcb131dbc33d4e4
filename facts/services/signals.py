"""The Stage-2 queue marker (reference §2.4 ``signal_processed``), for the reflections layer."""

from __future__ import annotations

from django.utils import timezone

from facts.models import Fact


def facts_mark_signal_processed(*, character_id: int, fact_ids: list[str]) -> int:
    """One-way: Stage 2 has mapped these facts to evidence signals (or nothing was there to map)."""
    return Fact.objects.filter(
        character_id=character_id, fact_id__in=fact_ids, signal_processed=False
    ).update(signal_processed=True, updated_at=timezone.now())
