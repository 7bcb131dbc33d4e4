"""Evidence of reflections and persona entries: score, derived label, signals (reference §3.4, §3.5.5).

Pure functions over plain values, shared by the reflections and persona layers; nothing here touches
the ORM. Reinforcement (R) and disputation (D) are stored raw and decay only when read, each on its
own clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import date, datetime
from enum import StrEnum
from typing import Literal

REINFORCEMENT_HALF_LIFE_DAYS = 30.0
DISPUTATION_HALF_LIFE_DAYS = 180.0

PROMOTED_AT = 2.0
CONFIRMED_AT = 1.0
ARCHIVE_CANDIDATE_AT = -2.0
# An entry whose score stays below zero on this many calendar days goes to the archive shards.
ARCHIVE_AFTER_SUB_ZERO_DAYS = 14

DerivedStatus = Literal["promoted", "confirmed", "pending", "archive_candidate"]


class Signal(StrEnum):
    REINFORCES = "reinforces"  # Stage 2: a new fact supports the entry
    NEGATES = "negates"  # Stage 2: a new fact contradicts it
    CONFIRMED = "confirmed"  # the user confirmed a surfaced reflection
    DENIED = "denied"  # the user denied it (the caller also sets status denied)
    IGNORED = "ignored"  # the user let a surfaced reflection pass
    REBUTTAL = "rebuttal"  # the negative-keyword hook found it disputed


@dataclass(frozen=True)
class Evidence:
    reinforcement: float = 0.0
    disputation: float = 0.0
    rein_last_signal_at: datetime | None = None
    disp_last_signal_at: datetime | None = None
    # Lifetime count of Stage-2 reinforcements: from the third on, each weighs double.
    user_fact_reinforce_count: int = 0
    protected: bool = False


def _decayed(value: float, last_signal_at: datetime | None, now: datetime, half_life_days: float) -> float:
    if value == 0.0:
        return 0.0
    # No clock (old data) or a clock in the future counts as a signal just now: full weight.
    age_seconds = 0.0 if last_signal_at is None else max(0.0, (now - last_signal_at).total_seconds())
    return value * 0.5 ** (age_seconds / (half_life_days * 86400.0))


def evidence_score(evidence: Evidence, *, now: datetime) -> float:
    """``R·0.5^(age_R/30d) − D·0.5^(age_D/180d)``; protected entries score +∞."""
    if evidence.protected:
        return math.inf
    return _decayed(
        evidence.reinforcement, evidence.rein_last_signal_at, now, REINFORCEMENT_HALF_LIFE_DAYS
    ) - _decayed(evidence.disputation, evidence.disp_last_signal_at, now, DISPUTATION_HALF_LIFE_DAYS)


def derived_status(score: float) -> DerivedStatus:
    """The label a score reads as; a label only, never stored."""
    if score >= PROMOTED_AT:
        return "promoted"
    if score >= CONFIRMED_AT:
        return "confirmed"
    if score <= ARCHIVE_CANDIDATE_AT:
        return "archive_candidate"
    return "pending"


def signal_deltas(signal: Signal, *, reinforce_count: int) -> tuple[float, float]:
    """(ΔR, ΔD) of one signal; ``reinforce_count`` is the lifetime count before this one."""
    if signal is Signal.REINFORCES:
        return (1.0 if reinforce_count >= 2 else 0.5), 0.0
    if signal is Signal.CONFIRMED:
        return 1.0, 0.0
    if signal is Signal.IGNORED:
        return -0.2, 0.0
    return 0.0, 1.0  # negates, denied, rebuttal


def evidence_apply(evidence: Evidence, signal: Signal, *, now: datetime) -> Evidence:
    """Add one signal to the raw values, resetting only the changed side's clock.

    The raw value is added to without decaying it first, so a new signal of a kind brings the old
    evidence of that kind back to full weight: the original behaves this way and scores depend on
    it (§3.4). Protected entries take no signals.
    """
    if evidence.protected:
        return evidence
    delta_r, delta_d = signal_deltas(signal, reinforce_count=evidence.user_fact_reinforce_count)
    changed = evidence
    if delta_r:
        changed = replace(
            changed, reinforcement=max(0.0, changed.reinforcement + delta_r), rein_last_signal_at=now
        )
    if delta_d:
        changed = replace(
            changed, disputation=max(0.0, changed.disputation + delta_d), disp_last_signal_at=now
        )
    if signal is Signal.REINFORCES:
        changed = replace(changed, user_fact_reinforce_count=changed.user_fact_reinforce_count + 1)
    return changed


def initial_reinforcement(max_source_importance: int | None) -> float:
    """The R a new reflection starts with, from the most important of its source facts."""
    return {10: 0.8, 9: 0.6, 8: 0.4, 7: 0.2}.get(max_source_importance or 0, 0.0)


def evidence_merged(target: Evidence, other: Evidence, *, now: datetime) -> Evidence:
    """A merge keeps the larger R and the larger D and starts both clocks again (§3.5.3)."""
    return replace(
        target,
        reinforcement=max(target.reinforcement, other.reinforcement),
        disputation=max(target.disputation, other.disputation),
        rein_last_signal_at=now,
        disp_last_signal_at=now,
    )


def sub_zero_day_counted(
    *, score: float, sub_zero_days: int, last_increment_date: date | None, today: date
) -> tuple[int, date | None]:
    """The archive sweep's counter: +1 for a score below zero, at most once a calendar day.

    It never goes down here; only a merge resets it.
    """
    if score >= 0 or last_increment_date == today:
        return sub_zero_days, last_increment_date
    return sub_zero_days + 1, today
