"""Back-off, dead letter and the 5-hour probe for the layer's background work (reference §3.8).

NOTE for the integrator: the kernel's one job mechanism (``nekomem.journal.jobs``, helper ``jobs``)
was not on this branch's base when this was written, so the bookkeeping lives here, behind these four
functions, with the kernel's numbers (5 attempts, back-off 1, 2, 4, 8 minutes, one probe every 5 h).
Swapping onto the kernel means re-implementing ``retry_gate`` / ``retry_failed`` / ``retry_succeeded``
/ ``retry_state`` over ``job_*`` and dropping ``RetryState``; no caller changes.

Work is identified by (character, kind) and a ``key``: a new key (synthesis keys on a hash of all
unabsorbed fact ids, so any new fact changes it) starts the count again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from reflections.models import RetryState

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 5
BACKOFF_FIRST = timedelta(minutes=1)
PROBE_EVERY = timedelta(hours=5)


def backoff_delay(attempts: int) -> timedelta:
    return BACKOFF_FIRST * (2 ** max(0, attempts - 1))


@dataclass(frozen=True)
class Gate:
    allowed: bool
    probe: bool = False
    reason: str = ""


def _state(*, character_id: int, kind: str, key: str) -> RetryState:
    state, _ = RetryState.objects.get_or_create(character_id=character_id, kind=kind, defaults={"key": key})
    if state.key != key:
        # Different work now: its predecessor's failures say nothing about it.
        state.key, state.attempts, state.next_attempt_at, state.dead_at = key, 0, None, None
        state.last_probe_at, state.last_error = None, ""
        state.save()
    return state


def retry_gate(*, character_id: int, kind: str, key: str, now: datetime) -> Gate:
    """May the work run now? A dead key runs only as the 5-hourly probe."""
    state = _state(character_id=character_id, kind=kind, key=key)
    if state.dead_at is not None:
        last = state.last_probe_at or state.dead_at
        if now - last >= PROBE_EVERY:
            RetryState.objects.filter(pk=state.pk).update(last_probe_at=now)
            return Gate(allowed=True, probe=True)
        return Gate(allowed=False, reason="dead")
    if state.next_attempt_at is not None and now < state.next_attempt_at:
        return Gate(allowed=False, reason="backoff")
    return Gate(allowed=True)


def retry_failed(*, character_id: int, kind: str, key: str, now: datetime, error: BaseException) -> str:
    """Count a failed attempt; returns ``backoff`` or ``dead``."""
    state = _state(character_id=character_id, kind=kind, key=key)
    state.attempts += 1
    state.last_error = f"{type(error).__name__}: {error}"[:2000]
    if state.attempts >= MAX_ATTEMPTS:
        state.dead_at = state.dead_at or now
        state.next_attempt_at = None
        outcome = "dead"
    else:
        state.next_attempt_at = now + backoff_delay(state.attempts)
        outcome = "backoff"
    state.save()
    logger.warning("%s failed character=%s attempt=%d -> %s", kind, character_id, state.attempts, outcome)
    return outcome


def retry_succeeded(*, character_id: int, kind: str) -> None:
    RetryState.objects.filter(character_id=character_id, kind=kind).delete()


def retry_state(*, character_id: int, kind: str) -> RetryState | None:
    return RetryState.objects.filter(character_id=character_id, kind=kind).first()
