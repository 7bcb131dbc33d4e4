"""Status transitions and evidence signals of reflections, each written with its event (§2.14, §3.4).

Callers hold the character lock inside a transaction (``reflection_transition`` and
``reflection_signal_apply`` check it); the public services below take the lock themselves.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from nekomem.characters.locks import lock_character
from nekomem.characters.services import character_memory_changed
from nekomem.errors import Conflict
from nekomem.journal.causes import caused_by
from nekomem.journal.services import event_append
from nekomem.runtime.switches import POWERFUL_MEMORY, switch_enabled
from reflections.evidence import CONFIRMED_AT, Signal, evidence_apply
from reflections.models import RECALL_POOL, Reflection, SurfacedReflection
from reflections.services.records import (
    STATUS_STAMPS,
    evidence_of,
    evidence_set,
    evidence_snapshot,
    score_of,
)

logger = logging.getLogger(__name__)

# Powerful memory OFF: pending reflections confirm by age alone (§3.5.4).
WEAK_MEMORY_AUTO_CONFIRM = timedelta(days=7)


def _require_atomic() -> None:
    if not connection.in_atomic_block:
        raise RuntimeError("reflection writes run inside the caller's locked transaction")


def reflection_transition(
    *,
    reflection: Reflection,
    to: str,
    now: datetime,
    reason: str | None = None,
    also: dict[str, Any] | None = None,
) -> None:
    """Move one reflection to ``to``, stamp ``<to>_at``, save, and append ``reflection.state_changed``."""
    _require_atomic()
    before = reflection.status
    reflection.status = to
    stamp = STATUS_STAMPS.get(Reflection.Status(to))
    if stamp:
        setattr(reflection, stamp, now)
    for name, value in (also or {}).items():
        setattr(reflection, name, value)
    reflection.save()
    payload: dict[str, Any] = {
        "reflection_id": reflection.reflection_id,
        "from": before,
        "to": to,
        "ts": now.isoformat(),
    }
    if reason:
        payload["reason"] = reason
    payload.update({k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in (also or {}).items()})
    event_append(character_id=reflection.character_id, event_type="reflection.state_changed", payload=payload)
    character_memory_changed(character_id=reflection.character_id, pool=RECALL_POOL, rows=[reflection.pk])


def reflection_fields_set(
    *,
    reflection: Reflection,
    now: datetime,
    reason: str,
    fields: dict[str, Any],
    extra: dict[str, Any] | None = None,
) -> None:
    """Set ``fields`` (and the keys of ``extra`` inside ``reflection.extra``) on a reflection whose
    status stays, save it, and append the ``reflection.state_changed`` that replays them (``from`` =
    ``to``). The one place such a change is written: a change saved without it is lost by a replay.
    The caller says what changed in the recall pool (``character_memory_changed``)."""
    _require_atomic()
    for name, value in fields.items():
        setattr(reflection, name, value)
    if extra:
        reflection.extra = {**(reflection.extra or {}), **extra}
    reflection.save()
    payload: dict[str, Any] = {
        "reflection_id": reflection.reflection_id,
        "from": reflection.status,
        "to": reflection.status,
        "ts": now.isoformat(),
        "reason": reason,
        **{k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in fields.items()},
    }
    if extra:
        payload["extra"] = extra
    event_append(character_id=reflection.character_id, event_type="reflection.state_changed", payload=payload)


def reflection_signal_apply(*, reflection: Reflection, signal: Signal, source: str, now: datetime) -> None:
    """Add one evidence signal (raw add, only the changed side's clock reset) and its event."""
    _require_atomic()
    evidence_set(reflection, evidence_apply(evidence_of(reflection), signal, now=now))
    reflection.save()
    event_append(
        character_id=reflection.character_id,
        event_type="reflection.evidence_updated",
        payload=evidence_snapshot(reflection, source=source),
    )
    # Its score orders the long-term-memory block and recall: caches keyed by the version see the change.
    character_memory_changed(character_id=reflection.character_id, pool=RECALL_POOL, rows=[reflection.pk])


MIGRATION_SEED_SOURCE = "migration_seed"
# (R, D) an entry from before the evidence fields gets from its status (the original's one-shot
# migration, reference §2.10 ``__evidence_migration_v1__``): its derived status then matches its status.
_MIGRATION_SEEDS = {
    Reflection.Status.PROMOTED: (2.0, 0.0),
    Reflection.Status.CONFIRMED: (1.0, 0.0),
    Reflection.Status.DENIED: (0.0, 2.0),
}


def reflections_evidence_seed(*, character_id: int, now: datetime) -> int:
    """Seed the evidence of the character's reflections that never had a signal; returns how many.

    Once per character: the caller keeps the marker. Archived entries stay as they were.
    """
    _require_atomic()
    unsignalled = Reflection.objects.filter(
        character_id=character_id,
        archive_shard_path__isnull=True,
        rein_last_signal_at__isnull=True,
        disp_last_signal_at__isnull=True,
        status__in=list(_MIGRATION_SEEDS),
    )
    seeded: list[int] = []
    for reflection in unsignalled.order_by("pk"):
        rein, disp = _MIGRATION_SEEDS[Reflection.Status(reflection.status)]
        if rein:
            reflection.reinforcement = max(0.0, reflection.reinforcement + rein)
            reflection.rein_last_signal_at = now
        if disp:
            reflection.disputation = max(0.0, reflection.disputation + disp)
            reflection.disp_last_signal_at = now
        reflection.save()
        event_append(
            character_id=character_id,
            event_type="reflection.evidence_updated",
            payload=evidence_snapshot(reflection, source=MIGRATION_SEED_SOURCE),
        )
        seeded.append(reflection.pk)
    if seeded:
        character_memory_changed(character_id=character_id, pool=RECALL_POOL, rows=seeded)
    return len(seeded)


def surfaced_mark_handled(*, character_id: int, reflection_ids: list[str]) -> None:
    """Promotion, merge or denial closes the reflection's open surfaced entries (§2.9)."""
    SurfacedReflection.objects.filter(
        character_id=character_id, reflection_id__in=reflection_ids, feedback__isnull=True
    ).update(handled=True)


def _confirm_by_score(*, character_id: int, now: datetime) -> int:
    moved = 0
    pending = Reflection.objects.filter(character_id=character_id, status=Reflection.Status.PENDING)
    for reflection in pending.order_by("pk"):
        if score_of(reflection, now=now) >= CONFIRMED_AT:
            reflection_transition(reflection=reflection, to=Reflection.Status.CONFIRMED, now=now)
            moved += 1
    return moved


def _confirm_by_age(*, character_id: int, now: datetime) -> int:
    moved = 0
    old = Reflection.objects.filter(
        character_id=character_id,
        status=Reflection.Status.PENDING,
        created_at__lte=now - WEAK_MEMORY_AUTO_CONFIRM,
    )
    for reflection in old.order_by("pk"):
        reflection_transition(
            reflection=reflection, to=Reflection.Status.CONFIRMED, now=now, also={"auto_confirmed": True}
        )
        moved += 1
    return moved


@caused_by("promotion")
def reflections_auto_promote(*, character_id: int, now: datetime | None = None) -> int:
    """Auto-promotion's confirm step: by score when powerful memory is ON, by age when OFF.

    Returns how many reflections moved. The step from confirmed into persona belongs to the persona
    layer and is not taken here.
    """
    now = now or timezone.now()
    with transaction.atomic():
        lock_character(character_id)
        if switch_enabled(POWERFUL_MEMORY):
            return _confirm_by_score(character_id=character_id, now=now)
        return _confirm_by_age(character_id=character_id, now=now)


# --- manual transitions (REST and admin) -----------------------------------------------------------------

_MANUAL: dict[str, tuple[frozenset[str], str]] = {
    "confirm": (frozenset({Reflection.Status.PENDING}), Reflection.Status.CONFIRMED),
    "deny": (frozenset({Reflection.Status.PENDING, Reflection.Status.CONFIRMED}), Reflection.Status.DENIED),
}


def reflection_locked(*, character_id: int, reflection_id: str, with_subjects: bool = False) -> Reflection:
    """``with_subjects``: a group-chat subject's reflection too (the memory browser's edit and delete)."""
    lock_character(character_id)
    # The character lock serialises every writer of its reflections; no row lock is needed.
    manager = Reflection.with_subjects if with_subjects else Reflection.objects
    reflection = manager.filter(character_id=character_id, reflection_id=reflection_id).first()
    if reflection is None:
        raise Reflection.DoesNotExist(reflection_id)
    return reflection


def reflection_confirm(*, character_id: int, reflection_id: str, now: datetime | None = None) -> Reflection:
    return _manual(character_id=character_id, reflection_id=reflection_id, action="confirm", now=now)


def reflection_deny(*, character_id: int, reflection_id: str, now: datetime | None = None) -> Reflection:
    return _manual(character_id=character_id, reflection_id=reflection_id, action="deny", now=now)


def _manual(*, character_id: int, reflection_id: str, action: str, now: datetime | None) -> Reflection:
    now = now or timezone.now()
    allowed, to = _MANUAL[action]
    with transaction.atomic():
        reflection = reflection_locked(character_id=character_id, reflection_id=reflection_id)
        if reflection.status not in allowed:
            raise Conflict(f"cannot {action} a {reflection.status} reflection")
        reason = "manual" if to == Reflection.Status.DENIED else None
        also = {"denied_reason": "manual"} if to == Reflection.Status.DENIED else None
        reflection_transition(reflection=reflection, to=to, now=now, reason=reason, also=also)
        if to == Reflection.Status.DENIED:
            surfaced_mark_handled(character_id=character_id, reflection_ids=[reflection_id])
    return reflection
