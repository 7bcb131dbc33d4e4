"""Helpers of the history tests: facts written through the layer's services, so each change is versioned."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from facts.models import Fact
from facts.services import ImportedFact, facts_import_append
from facts.services.history import facts_current
from nekomem.journal.causes import change_cause


def facts_added(character_id: int, *texts: str, cause: str = "import") -> str:
    """Append facts as a Markdown import would; returns the source the change was stamped with."""
    with change_cause(cause) as source:
        facts_import_append(character_id=character_id, items=[ImportedFact(text=t) for t in texts])
    return source


def fact_by_text(character_id: int, text: str) -> Fact:
    return Fact.with_subjects.get(character_id=character_id, text=text)


def facts_state(character_id: int) -> dict[str, dict[str, Any]]:
    """Every fact's versioned fields (what a version records and the as-of read returns)."""
    return {row: fields for row, (_, fields) in facts_current(character_id).items()}


def live_texts(character_id: int) -> set[str]:
    return set(
        Fact.with_subjects.filter(character_id=character_id, archived=False).values_list("text", flat=True)
    )


def moment() -> datetime:
    """A time that every change so far is at or before and every later change is after: the clock is
    read, then waited on until it moves past (no fixed sleep)."""
    at = timezone.now()
    while timezone.now() <= at:
        pass
    return at
