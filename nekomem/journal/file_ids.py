"""Ids and timestamps of the journal's files, as they are read back. Events and ops keep their ids, so
a re-import recognises them; both ids are unique across characters here, so a directory imported a
second time under another name gets ids derived from the original id and the new character.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from nekomem.journal.models import Event, OutboxOp
from nekomem.portability import (
    chunked,
)
from nekomem.timestamps import parse_iso


def copy_id(original: uuid.UUID, *, character_id: int) -> uuid.UUID:
    """The id a row gets in a character when another character already holds ``original``."""
    return uuid.uuid5(original, f"nekomem-character:{character_id}")


def parse_uuid(value: Any, key: str) -> uuid.UUID:
    if not isinstance(value, str):
        raise ValueError(f"missing or non-string {key!r}")
    try:
        return uuid.UUID(value)
    except ValueError as exc:
        raise ValueError(f"{key!r} is not a UUID") from exc


def parse_timestamp(value: Any, key: str) -> datetime:
    stamp = parse_iso(value)
    if stamp is None:
        raise ValueError(f"missing {key!r}")
    return stamp


def owned_ids(
    model: type[Event] | type[OutboxOp], field: str, ids: Iterable[uuid.UUID]
) -> dict[uuid.UUID, int]:
    """Which of ``ids`` exist already, and the character holding each."""
    wanted = list(ids)
    owners: dict[uuid.UUID, int] = {}
    for chunk in chunked(wanted):
        owners.update(model.objects.filter(**{f"{field}__in": chunk}).values_list(field, "character_id"))
    return owners


def own_id(original: uuid.UUID, owners: dict[uuid.UUID, int], *, character_id: int) -> uuid.UUID:
    holder = owners.get(original)
    return (
        original if holder is None or holder == character_id else copy_id(original, character_id=character_id)
    )
