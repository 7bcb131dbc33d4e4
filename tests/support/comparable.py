"""State of two characters compared after the same change made two ways (the browser, the REST API).

The two changes happen a few milliseconds apart, so timestamps and ids stamped with the second differ;
``comparable`` keeps whether a stamp (or a random archive shard name) is there and drops its value, and
leaves everything else as it is.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from nekomem.journal.events import VERSION_EVENT
from nekomem.journal.models import Event

ISO_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
ID_STAMP = re.compile(r"_\d{14}_")  # manual_/corr_ ids carry the second they were made
SHARD_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}_[0-9a-f]{8}\.json$")  # archive shards get a random suffix


def comparable(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: comparable(item) for key, item in value.items() if key not in ("ts", "event_id")}
    if isinstance(value, list | tuple):
        return [comparable(item) for item in value]
    if isinstance(value, datetime | date) or (isinstance(value, str) and ISO_STAMP.match(value)):
        return "<stamp>"
    if isinstance(value, str) and SHARD_NAME.match(value):
        return "<shard>"
    if isinstance(value, str):
        return ID_STAMP.sub("_<stamp>_", value)
    return value


def events_since(character_id: int, after_seq: int) -> list[tuple[str, Any]]:
    """(type, comparable payload) of the character's events after ``after_seq``, in order."""
    # The original's events: versions name the row by its primary key, which differs between characters.
    rows = (
        Event.objects.filter(character_id=character_id, seq__gt=after_seq)
        .exclude(type=VERSION_EVENT)
        .order_by("seq")
    )
    return [(event.type, comparable(event.payload)) for event in rows]


def last_event_seq() -> int:
    return Event.objects.order_by("-seq").values_list("seq", flat=True).first() or 0
