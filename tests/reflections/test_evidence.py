"""Evidence math against hand-computed values, and the properties every caller relies on."""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reflections.evidence import (
    Evidence,
    Signal,
    derived_status,
    evidence_apply,
    evidence_merged,
    evidence_score,
    initial_reinforcement,
    signal_deltas,
    sub_zero_day_counted,
)

NOW = datetime(2026, 6, 1, 12, 0, 0)
DAY = timedelta(days=1)


def test_score_halves_r_every_30_days_and_d_every_180_days():
    evidence = Evidence(
        reinforcement=2.0,
        disputation=1.0,
        rein_last_signal_at=NOW - 30 * DAY,
        disp_last_signal_at=NOW - 180 * DAY,
    )
    assert evidence_score(evidence, now=NOW) == pytest.approx(2.0 * 0.5 - 1.0 * 0.5)
    sixty = Evidence(reinforcement=1.0, rein_last_signal_at=NOW - 60 * DAY)
    assert evidence_score(sixty, now=NOW) == pytest.approx(0.25)
    ninety_d = Evidence(disputation=2.0, disp_last_signal_at=NOW - 90 * DAY)
    assert evidence_score(ninety_d, now=NOW) == pytest.approx(-2.0 * 2**-0.5)


def test_a_future_clock_counts_as_age_zero():
    evidence = Evidence(reinforcement=1.5, rein_last_signal_at=NOW + 10 * DAY)
    assert evidence_score(evidence, now=NOW) == 1.5


def test_protected_entries_score_infinity_and_ignore_signals():
    card = Evidence(protected=True)
    assert evidence_score(card, now=NOW) == math.inf
    assert evidence_apply(card, Signal.DENIED, now=NOW) == card
    assert derived_status(math.inf) == "promoted"


@pytest.mark.parametrize(
    ("score", "label"),
    [
        (2.0, "promoted"),
        (1.99, "confirmed"),
        (1.0, "confirmed"),
        (0.99, "pending"),
        (-1.99, "pending"),
        (-2.0, "archive_candidate"),
        (-5.0, "archive_candidate"),
    ],
)
def test_derived_labels_at_2_1_and_minus_2(score, label):
    assert derived_status(score) == label


@pytest.mark.parametrize(
    ("signal", "delta_r", "delta_d"),
    [
        (Signal.NEGATES, 0.0, 1.0),
        (Signal.CONFIRMED, 1.0, 0.0),
        (Signal.DENIED, 0.0, 1.0),
        (Signal.IGNORED, -0.2, 0.0),
        (Signal.REBUTTAL, 0.0, 1.0),
    ],
)
def test_signal_weights(signal, delta_r, delta_d):
    assert signal_deltas(signal, reinforce_count=0) == (delta_r, delta_d)


def test_reinforcements_weigh_double_from_the_third():
    evidence = Evidence()
    values = []
    for _ in range(4):
        evidence = evidence_apply(evidence, Signal.REINFORCES, now=NOW)
        values.append(evidence.reinforcement)
    assert values == [0.5, 1.0, 2.0, 3.0]
    assert evidence.user_fact_reinforce_count == 4


def test_a_signal_adds_to_the_raw_value_and_resets_only_its_own_clock():
    old_r = NOW - 60 * DAY
    old_d = NOW - 90 * DAY
    evidence = Evidence(
        reinforcement=1.0, disputation=1.0, rein_last_signal_at=old_r, disp_last_signal_at=old_d
    )
    confirmed = evidence_apply(evidence, Signal.CONFIRMED, now=NOW)
    # raw 1.0 + 1.0, not the decayed 0.25 + 1.0: a new signal restores the old evidence in full
    assert confirmed.reinforcement == 2.0 and confirmed.rein_last_signal_at == NOW
    assert confirmed.disputation == 1.0 and confirmed.disp_last_signal_at == old_d
    negated = evidence_apply(evidence, Signal.NEGATES, now=NOW)
    assert negated.disputation == 2.0 and negated.disp_last_signal_at == NOW
    assert negated.rein_last_signal_at == old_r


def test_ignored_never_drives_r_below_zero():
    evidence = Evidence(reinforcement=0.1, rein_last_signal_at=NOW)
    assert evidence_apply(evidence, Signal.IGNORED, now=NOW).reinforcement == 0.0


@pytest.mark.parametrize(
    ("importance", "seed"), [(10, 0.8), (9, 0.6), (8, 0.4), (7, 0.2), (6, 0.0), (None, 0.0)]
)
def test_initial_reinforcement_from_the_most_important_source(importance, seed):
    assert initial_reinforcement(importance) == seed


def test_a_merge_keeps_the_larger_sides_and_restarts_both_clocks():
    target = Evidence(reinforcement=1.0, disputation=3.0, rein_last_signal_at=NOW - DAY)
    other = Evidence(reinforcement=2.5, disputation=0.5, disp_last_signal_at=NOW - DAY)
    merged = evidence_merged(target, other, now=NOW)
    assert (merged.reinforcement, merged.disputation) == (2.5, 3.0)
    assert merged.rein_last_signal_at == NOW and merged.disp_last_signal_at == NOW


def test_sub_zero_days_count_once_a_calendar_day_and_never_down():
    today = date(2026, 6, 1)
    assert sub_zero_day_counted(score=-0.1, sub_zero_days=3, last_increment_date=None, today=today) == (
        4,
        today,
    )
    assert sub_zero_day_counted(score=-0.1, sub_zero_days=4, last_increment_date=today, today=today) == (
        4,
        today,
    )
    yesterday = today - DAY
    assert sub_zero_day_counted(score=0.5, sub_zero_days=4, last_increment_date=yesterday, today=today) == (
        4,
        yesterday,
    )


moments = st.datetimes(min_value=datetime(2020, 1, 1), max_value=datetime(2030, 1, 1))
raw = st.floats(min_value=0.0, max_value=50.0, allow_nan=False)


@given(r=raw, d=raw, r_at=moments, d_at=moments, now=moments)
def test_score_is_bounded_by_the_raw_values(r, d, r_at, d_at, now):
    evidence = Evidence(reinforcement=r, disputation=d, rein_last_signal_at=r_at, disp_last_signal_at=d_at)
    score = evidence_score(evidence, now=now)
    assert -d - 1e-9 <= score <= r + 1e-9


@given(r=raw, d=raw, r_at=moments, d_at=moments, now=moments, later=st.integers(min_value=0, max_value=10**8))
def test_without_signals_a_score_only_moves_toward_zero_from_each_side(r, d, r_at, d_at, now, later):
    evidence = Evidence(reinforcement=r, disputation=d, rein_last_signal_at=r_at, disp_last_signal_at=d_at)
    then = now + timedelta(seconds=later)
    r_only = Evidence(reinforcement=r, rein_last_signal_at=r_at)
    d_only = Evidence(disputation=d, disp_last_signal_at=d_at)
    assert evidence_score(r_only, now=then) <= evidence_score(r_only, now=now) + 1e-9
    assert evidence_score(d_only, now=then) >= evidence_score(d_only, now=now) - 1e-9
    assert math.isfinite(evidence_score(evidence, now=then))


@given(r=raw, d=raw, now=moments, signal=st.sampled_from(list(Signal)), count=st.integers(0, 10))
def test_applying_a_signal_moves_the_score_its_way_at_the_moment_of_the_signal(r, d, now, signal, count):
    evidence = Evidence(
        reinforcement=r,
        disputation=d,
        rein_last_signal_at=now,
        disp_last_signal_at=now,
        user_fact_reinforce_count=count,
    )
    after = evidence_apply(evidence, signal, now=now)
    delta_r, delta_d = signal_deltas(signal, reinforce_count=count)
    expected = max(0.0, r + delta_r) - max(0.0, d + delta_d)
    assert evidence_score(after, now=now) == pytest.approx(expected)
    assert after.reinforcement >= 0.0 and after.disputation >= 0.0
