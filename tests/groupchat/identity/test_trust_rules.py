"""The pure rules of the speaker-trust ledger: account ids, the wire's trust fields, effective trust."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from groupchat.identity.trust import (
    ACTIVITY_MAX_BONUS,
    MAX_REPORTED_BASE,
    TrustFieldError,
    TrustInput,
    effective_trust,
    normalize_account_id,
    trust_input_parse,
)


def test_account_ids_are_stable_platform_ids() -> None:
    assert normalize_account_id(" QQ:1001 ") == "qq:1001"
    assert normalize_account_id("discord:a.b@c-d") == "discord:a.b@c-d"
    for bad in ("1001", "qq:", ":1001", "qq:有空格 的名字", "q q:1", "qq:" + "9" * 96, None, 7):
        assert normalize_account_id(bad) is None


def test_no_trust_fields_is_none_and_a_legacy_value_stands_alone() -> None:
    assert trust_input_parse({"speaker_id": "qq:1"}) is None
    legacy = trust_input_parse({"speaker_trust": 0.3})
    assert legacy == TrustInput(legacy=0.3) and not legacy.server


def test_activity_ids_repeated_in_one_request_are_one_event() -> None:
    parsed = trust_input_parse(
        {
            "speaker_id": "qq:1001",
            "speaker_tier": "normal",
            "speaker_activity_events": [{"id": "activity_aaaaaaaa", "count": 2}, {"id": "activity_aaaaaaaa"}],
        }
    )
    assert parsed is not None and parsed.events == (("activity_aaaaaaaa", 2),)


def test_the_journal_form_round_trips() -> None:
    parsed = trust_input_parse(
        {
            "speaker_id": "qq:1001",
            "speaker_tier": "admin",
            "speaker_is_owner": True,
            "speaker_channel": "napcat",
            "speaker_activity_events": [{"id": "activity_bbbbbbbb", "count": 3}],
        }
    )
    assert parsed is not None and TrustInput.from_dict(parsed.as_dict()) == parsed


def test_a_reported_base_never_reaches_the_admin_rung_and_activity_is_capped() -> None:
    assert (
        effective_trust(tier=None, base=1.0, is_owner=False, adjustment=0, message_count=0)
        == MAX_REPORTED_BASE
    )
    capped = effective_trust(tier="normal", base=None, is_owner=False, adjustment=0, message_count=10_000)
    assert capped == pytest.approx(0.5 + ACTIVITY_MAX_BONUS)
    assert effective_trust(tier="admin", base=None, is_owner=True, adjustment=0, message_count=0) == 1.0
    assert effective_trust(tier=None, base=None, is_owner=False, adjustment=0.2, message_count=5) is None


@given(
    tier=st.sampled_from(["admin", "trusted", "normal", "none", None]),
    base=st.none() | st.floats(0, 1),
    adjustment=st.floats(-2, 2),
    count=st.integers(0, 10**6),
)
def test_effective_trust_is_always_within_zero_and_one(tier, base, adjustment, count) -> None:
    value = effective_trust(tier=tier, base=base, is_owner=False, adjustment=adjustment, message_count=count)
    if tier is None and base is None:
        assert value is None
    else:
        assert value is not None and 0.0 <= value <= 1.0


def test_every_violation_names_itself() -> None:
    with pytest.raises(TrustFieldError, match="exclusive"):
        trust_input_parse({"speaker_id": "qq:1", "speaker_tier": "normal", "speaker_base_trust": 0.5})
