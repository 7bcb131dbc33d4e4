"""Timestamps as the original's files write them: naive local ISO-8601."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone


def iso_local(value: datetime | None) -> str | None:
    """Naive local ISO-8601, the original's timestamp format."""
    if value is None:
        return None
    if timezone.is_naive(value):
        raise ValueError("iso_local() cannot be applied to a naive datetime")
    # The server's zone (settings.TIME_ZONE), as the original writes its files: not a zone a request
    # activated, and without ``localtime``'s lookup of one (a version's snapshot calls this per field).
    return value.astimezone(timezone.get_default_timezone()).replace(tzinfo=None).isoformat()


def parse_iso(value: Any) -> datetime | None:
    """An ISO string from a file (naive means local time); None or "" is no time. Raises ValueError
    on anything else."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ValueError(f"expected an ISO timestamp string, got {type(value).__name__}")
    parsed = datetime.fromisoformat(value)
    return timezone.make_aware(parsed) if timezone.is_naive(parsed) else parsed
